// SPDX-License-Identifier: Apache-2.0
/* memdiag-map-areas-helper: a test program for the process source (per-process map counts).
 * Used by the end-to-end tests, unit tests and memdiag-process-bench.
 *
 *   --mappings N   create N separate one-page anonymous read-write mappings the kernel cannot
 *                  merge (each with an unmapped one-page hole on both sides) and touch each
 *                  page; checked: the map count grows by exactly N.
 *   --copies K     then fork K-1 children that keep the same mappings (K processes in all).
 *                  Children die with the parent (PR_SET_PDEATHSIG); the parent kills and reaps
 *                  them on SIGTERM, SIGINT or SIGHUP.
 *   --zig COUNT    the seed incident's pattern (in the parent only, after the copies): mmap COUNT
 *                  separate 8 KiB blocks one after another (the kernel merges adjacent ones into
 *                  few mappings), then munmap every second block, --zig-batch B blocks per step
 *                  (default 2000) with --zig-step-ms M of sleep between steps (default 100), so
 *                  the map count climbs over a few seconds. A munmap failing (ENOMEM at
 *                  vm.max_map_count) stops the steps; it is reported and the program pauses.
 *   --touch        (zig) write to every block after mapping it.
 *
 * Protocol, on stdout, one line each, flushed:
 *   ready pid=<pid> maps=<VMAs> copies=<K>
 *   zig mapped blocks=<n> maps=<VMAs>              (zig mode, once the blocks are mapped)
 *   zig step=<i> maps=<VMAs>                       (zig mode, after each step)
 *   zig done maps=<VMAs> munmap_errno=<0 or errno>  (zig mode)
 * then it pauses until killed. <VMAs> is the line count of /proc/self/maps, minus 1 when a
 * line is [vsyscall] (not a mapping of the process). Exit status 2 on bad arguments, 1 when
 * setup fails (the reason on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static const char usage[] =
    "usage: memdiag-map-areas-helper [--mappings N] [--copies K] [--zig COUNT [--zig-batch B]\n"
    "                                [--zig-step-ms M] [--touch]]\n"
    "  --mappings N    N separate one-page anonymous mappings (guard holes between), touched\n"
    "  --copies K      K processes in all with those mappings (K-1 forked children), default 1\n"
    "  --zig COUNT     mmap COUNT x 8 KiB blocks, then munmap every second one in steps\n"
    "  --zig-batch B   blocks unmapped per step (default 2000)\n"
    "  --zig-step-ms M sleep between steps in ms (default 100)\n"
    "  --touch         write to every zig block after mapping it\n"
    "Prints 'ready pid=<pid> maps=<VMAs> copies=<K>' (and in zig mode 'zig step=<i> maps=<VMAs>'\n"
    "per step and 'zig done maps=<VMAs> munmap_errno=<errno>'), then pauses until killed.\n"
    "Exit status: 2 bad arguments, 1 setup failed.\n";

/* --- Children, and their end with the parent. --- */

static pid_t *children;                 /* allocated before the first fork */
static volatile sig_atomic_t nchildren; /* how many of them were forked */
static pid_t parent_pid;

/* Async-signal-safe: kill(2), waitpid(2). */
static void kill_children(void) {
  for (sig_atomic_t i = 0; i < nchildren; ++i) kill(children[i], SIGKILL);
  for (;;) {
    const pid_t r = waitpid(-1, NULL, 0);
    if (r < 0 && errno != EINTR) break; /* ECHILD: all reaped */
  }
}

static void on_stop_signal(int sig) {
  (void)sig;
  if (getpid() != parent_pid) _exit(0); /* a child that has not reset its handlers yet */
  kill_children();
  _exit(0);
}

static void install_stop_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGHUP);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  signal(SIGPIPE, SIG_IGN); /* a reader that went away must not stop the pause */
}

static void pause_forever(void) {
  for (;;) pause();
}

/* --- Counting mappings without allocating (stdio would create the heap mapping). --- */

static char maps_buffer[65536];

/* Lines of /proc/self/maps, minus one for [vsyscall]; -1 if unreadable. */
static long count_maps(void) {
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  static const char vsyscall[] = "[vsyscall]";
  const size_t vlen = sizeof vsyscall - 1;
  char tail[sizeof vsyscall] = {0}; /* the last vlen characters of the current line */
  size_t tail_len = 0;
  long lines = 0, vsyscall_lines = 0;
  for (;;) {
    const ssize_t n = read(fd, maps_buffer, sizeof maps_buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return -1;
    }
    if (n == 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      const char c = maps_buffer[i];
      if (c == '\n') {
        ++lines;
        if (tail_len == vlen && memcmp(tail, vsyscall, vlen) == 0) ++vsyscall_lines;
        tail_len = 0;
      } else if (tail_len < vlen) {
        tail[tail_len++] = c;
      } else {
        memmove(tail, tail + 1, vlen - 1);
        tail[vlen - 1] = c;
      }
    }
  }
  close(fd);
  return lines - vsyscall_lines;
}

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...) {
  va_list args;
  va_start(args, format);
  vfprintf(stdout, format, args);
  va_end(args);
  fflush(stdout);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* --- Arguments. --- */

struct options {
  long mappings, copies, zig, zig_batch, zig_step_ms;
  int touch;
};

/* Accepts "--name VALUE" and "--name=VALUE". Returns 1 if argv[*i] is that flag. */
static int take_number(int argc, char **argv, int *i, const char *name, long min, long max, long *out) {
  const size_t len = strlen(name);
  const char *arg = argv[*i];
  const char *text;
  if (strncmp(arg, name, len) != 0) return 0;
  if (arg[len] == '=') {
    text = arg + len + 1;
  } else if (arg[len] == '\0') {
    if (*i + 1 >= argc) {
      fprintf(stderr, "%s needs a value (--help for usage)\n", name);
      exit(2);
    }
    text = argv[++*i];
  } else {
    return 0;
  }
  char *end = NULL;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v < min || v > max) {
    fprintf(stderr, "%s: expected a number from %ld to %ld, got '%s' (--help for usage)\n", name, min, max, text);
    exit(2);
  }
  *out = v;
  return 1;
}

static struct options parse_options(int argc, char **argv) {
  struct options o = {0, 1, 0, 2000, 100, 0};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(usage, stdout);
      exit(0);
    }
    if (strcmp(argv[i], "--touch") == 0) {
      o.touch = 1;
      continue;
    }
    if (take_number(argc, argv, &i, "--mappings", 0, 10000000, &o.mappings) ||
        take_number(argc, argv, &i, "--copies", 1, 100000, &o.copies) ||
        take_number(argc, argv, &i, "--zig-batch", 1, 100000000, &o.zig_batch) ||
        take_number(argc, argv, &i, "--zig-step-ms", 0, 3600000, &o.zig_step_ms) ||
        take_number(argc, argv, &i, "--zig", 0, 100000000, &o.zig)) {
      continue;
    }
    fprintf(stderr, "unknown argument '%s' (--help for usage)\n", argv[i]);
    exit(2);
  }
  return o;
}

/* --- The mappings. --- */

/* N one-page RW mappings at the odd pages of a reserved range of 2N+1 pages: every mapping has
 * a one-page hole below and above it, so nothing merges it with a neighbour (nothing else of
 * this program maps a single page later; the zig blocks are two pages). */
static int create_mappings(long n, long page) {
  if (n == 0) return 0;
  const size_t span = (size_t)(2 * n + 1) * (size_t)page;
  char *base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    fprintf(stderr, "reserving %zu bytes: %s\n", span, strerror(errno));
    return -1;
  }
  /* Give the range back, then map single pages into it: never more than N mappings at once. */
  munmap(base, span);
  for (long i = 0; i < n; ++i) {
    char *want = base + (size_t)(2 * i + 1) * (size_t)page;
    char *got = mmap(want, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == MAP_FAILED) {
      fprintf(stderr, "mapping %ld of %ld: %s%s\n", i + 1, n, strerror(errno),
              errno == ENOMEM ? " (vm.max_map_count reached?)" : "");
      return -1;
    }
    if (got != want) { /* a kernel before 4.17 takes the flag as a hint */
      fprintf(stderr, "mapping %ld of %ld: placed at %p instead of %p\n", i + 1, n, (void *)got, (void *)want);
      return -1;
    }
    *(volatile char *)got = 1;
  }
  return 0;
}

/* --- Copies. --- */

static int fork_copies(long copies) {
  if (copies <= 1) return 0;
  fflush(stdout);
  /* Stop signals wait while a fork is under way, so the handler knows every child. */
  sigset_t stop, old;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGHUP);
  for (long i = 0; i < copies - 1; ++i) {
    sigprocmask(SIG_BLOCK, &stop, &old);
    const pid_t pid = fork();
    if (pid < 0) {
      const int error = errno;
      sigprocmask(SIG_SETMASK, &old, NULL);
      fprintf(stderr, "fork %ld of %ld: %s\n", i + 1, copies - 1, strerror(error));
      return -1;
    }
    if (pid == 0) {
      signal(SIGTERM, SIG_DFL);
      signal(SIGINT, SIG_DFL);
      signal(SIGHUP, SIG_DFL);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent_pid) _exit(0); /* the parent died before the prctl */
      sigprocmask(SIG_SETMASK, &old, NULL);
      pause_forever();
    }
    children[i] = pid;
    nchildren = (sig_atomic_t)(i + 1);
    sigprocmask(SIG_SETMASK, &old, NULL);
  }
  return 0;
}

/* --- Zig. --- */

static void run_zig(const struct options *o, long page) {
  const size_t block = 8192;
  char **blocks = malloc((size_t)o->zig * sizeof *blocks);
  if (blocks == NULL) {
    say("zig done maps=%ld munmap_errno=%d\n", count_maps(), ENOMEM);
    return;
  }
  long mapped = 0;
  int error = 0;
  for (; mapped < o->zig; ++mapped) {
    char *p = mmap(NULL, block, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      error = errno;
      fprintf(stderr, "zig: mmap of block %ld failed: %s\n", mapped + 1, strerror(error));
      break;
    }
    if (o->touch) {
      for (size_t off = 0; off < block; off += (size_t)page) p[off] = 1;
    }
    blocks[mapped] = p;
  }
  say("zig mapped blocks=%ld maps=%ld\n", mapped, count_maps());
  long step = 0;
  for (long next = 0; next < mapped && error == 0;) {
    for (long done = 0; done < o->zig_batch && next < mapped; ++done, next += 2) {
      if (munmap(blocks[next], block) != 0) {
        error = errno;
        fprintf(stderr, "zig: munmap of block %ld failed: %s%s\n", next + 1, strerror(error),
                error == ENOMEM ? " (vm.max_map_count reached)" : "");
        break;
      }
    }
    say("zig step=%ld maps=%ld\n", ++step, count_maps());
    if (error == 0 && next < mapped && o->zig_step_ms > 0) sleep_ms(o->zig_step_ms);
  }
  say("zig done maps=%ld munmap_errno=%d\n", count_maps(), error);
}

int main(int argc, char **argv) {
  /* stdio would malloc its buffer at the first line printed, after the count in that line,
   * and a first malloc can add a mapping ([heap]): the reported count would be one short. */
  static char stdout_buffer[4096];
  setvbuf(stdout, stdout_buffer, _IOLBF, sizeof stdout_buffer);
  const struct options o = parse_options(argc, argv);
  const long page = sysconf(_SC_PAGESIZE);
  parent_pid = getpid();
  install_stop_handlers();

  if (o.copies > 1) { /* allocated now so the count before and after the mappings agree */
    children = calloc((size_t)o.copies, sizeof *children);
    if (children == NULL) {
      fprintf(stderr, "out of memory\n");
      return 1;
    }
  }
  const long before = count_maps();
  if (before < 0) {
    fprintf(stderr, "cannot read /proc/self/maps: %s\n", strerror(errno));
    return 1;
  }
  if (create_mappings(o.mappings, page) != 0) return 1;
  const long after = count_maps();
  if (after - before != o.mappings) {
    fprintf(stderr, "expected %ld more mappings, the kernel shows %ld (%ld before, %ld after)\n", o.mappings,
            after - before, before, after);
    return 1;
  }
  if (fork_copies(o.copies) != 0) {
    kill_children(); /* the ones forked so far */
    return 1;
  }
  say("ready pid=%d maps=%ld copies=%ld\n", (int)parent_pid, count_maps(), o.copies);
  if (o.zig > 0) run_zig(&o, page);
  pause_forever();
}
