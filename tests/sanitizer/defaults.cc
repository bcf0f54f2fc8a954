// Default options of the sanitizer runtimes, linked into every test and fuzz
// binary of a -DGPUADVISOR_SANITIZE=ON build, so a binary behaves the same run
// by ctest, by hand or by a debugger (environment variables still override).
//
// Leak suppressions are for third-party code only: each names a library we
// do not build (Debian's, compiled without ASan) and says why. A leak in our
// own code is a bug to fix, never an entry here.

extern "C" {

// Leaks are checked at exit; a heap-use-after-return check catches returned
// references to locals; initialization order across translation units is
// checked (a static that reads another file's static before it is built).
const char* __asan_default_options() {
  return "detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:"
         "strict_init_order=1";
}

// Every UB report is fatal (also compiled in with -fno-sanitize-recover), and
// comes with the stack that led to it.
const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }

const char* __lsan_default_suppressions() { return ""; }

}  // extern "C"
