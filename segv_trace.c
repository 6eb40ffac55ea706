#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
static int installed = 0;
static void handler(int sig, siginfo_t* info, void* ctx) {
  ucontext_t* uc = (ucontext_t*)ctx;
  unsigned long rip = uc->uc_mcontext.gregs[REG_RIP], rsp = uc->uc_mcontext.gregs[REG_RSP];
  char buf[256];
  int n = snprintf(buf, sizeof buf, "SEGV tid=%ld pid=%d addr=%p rip=%lx\n", (long)syscall(SYS_gettid), getpid(), info->si_addr, rip);
  write(2, buf, n);
  Dl_info dl;
  if (dladdr((void*)rip, &dl)) { n = snprintf(buf, sizeof buf, "rip in %s +%lx sym %s\n", dl.dli_fname, rip - (unsigned long)dl.dli_fbase, dl.dli_sname ? dl.dli_sname : "?"); write(2, buf, n); }
  unsigned long* sp = (unsigned long*)rsp;  /* return addresses near the top of the stack */
  for (int i = 0; i < 64; ++i) {
    if (dladdr((void*)sp[i], &dl) && dl.dli_fname) { n = snprintf(buf, sizeof buf, "  stack[%d] %s +%lx %s\n", i, dl.dli_fname, sp[i] - (unsigned long)dl.dli_fbase, dl.dli_sname ? dl.dli_sname : "?"); write(2, buf, n); }
  }
  _exit(139);
}
int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  static int (*real)(int, const struct sigaction*, struct sigaction*) = 0;
  if (!real) real = (int (*)(int, const struct sigaction*, struct sigaction*))dlsym(RTLD_NEXT, "sigaction");
  if (sig == SIGSEGV && act && installed) { if (old) memset(old, 0, sizeof *old); return 0; }
  return real(sig, act, old);
}
__attribute__((constructor)) static void install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, 0);
  installed = 1;
}
