// Starts Python's worker as soon as the page's head is parsed (shell.html loads this module
// async, right after lab-config, and names its two imports first with modulepreload), not after
// BokehJS and Panel: measured, early.js runs at 0.11-0.21 s; without the modulepreload its
// imports queued behind the shell's modules and it ran with the shell, at about 0.6 s.
// python.js takes the worker over (main.js starts it if this one did not run).
import { startWorker } from "./worker-start.js";

try { startWorker(); } catch (err) { /* python.js starts it again and says what failed */ }
