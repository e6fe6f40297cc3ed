// Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal or ssh session went away) as a request to stop
// cleanly: long runs check interrupt_requested() between frames, write what they measured and exit
// 130. A second signal terminates at once (the handler restores the default action).
#pragma once

namespace gpuoverlap {

void install_interrupt_handler();
bool interrupt_requested();

}  // namespace gpuoverlap
