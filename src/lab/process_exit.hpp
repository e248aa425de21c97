// The end of a process, however it ends normally: the shims write their files
// from a destructor (after exit() and its atexit handlers) and also from _exit
// and _Exit, which shells and fork children use to leave without destructors.
#pragma once

namespace strata::lab {

// Provided by each shim: write its results. May run twice in one process
// (e.g. _exit from a destructor); implementations write once per pid.
void on_process_exit() noexcept;

}  // namespace strata::lab
