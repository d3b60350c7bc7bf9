// Starts Python's worker as soon as the page's head is parsed (shell.html loads this module
// async, right after lab-config, and names its two imports first with modulepreload), not after
// BokehJS and Panel: measured, early.js ran at 0.11-0.21 s; without the modulepreload its
// imports queued behind the shell's modules and it ran with the shell, at about 0.6 s. On a
// busy 2-core machine it runs at 0.25-0.6 s (measured: its imports wait for one of HTTP/1.1's
// six connections, then for the main thread); starting the worker from the classic
// boot-early.js instead (0.25 s) made no page live sooner and the first plot later: the start
// is bound by CPU, not by this order.
// python.js takes the worker over (main.js starts it if this one did not run). An embed
// (?embed=1), or a browser that asks to save data, starts nothing here: Python waits until it
// is wanted (wanted.js).
import { embedAsked, savesData } from "./config.js";
import { startWorker } from "./worker-start.js";

try { if (!embedAsked() && !savesData()) startWorker(); } catch (err) { /* python.js starts it again and says what failed */ }
