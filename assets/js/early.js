// Starts Python's worker as soon as the page's head is parsed (shell.html loads this module
// async, right after lab-config), not after BokehJS and Panel: measured, the worker's script
// ran at 1.1-1.5 s when started from python.js's module graph, at about 0.1 s from here.
// python.js takes the worker over (main.js starts it if this one did not run).
import { startWorker } from "./worker-start.js";

try { startWorker(); } catch (err) { /* python.js starts it again and says what failed */ }
