/*
 * Run by guest/setup while only the boot CPU is online: opens one task-bound perf event of every
 * software type, then leaves a child holding them (inherited) for the guest's lifetime and exits
 * 0, so the caller knows the keys are on before it brings the other CPUs online.
 *
 * Why: the first perf event of a kind enables a kernel static key and the last one disables it
 * again, and each switch live-patches kernel text (text_poke_bp) and waits for every CPU to
 * acknowledge an IPI. Under QEMU's multi-threaded TCG that patching can catch the other vCPU at
 * the patched instruction with interrupts off, and the guest locks up (seen as a soft lockup
 * in sw_perf_event_destroy / smp_call_function_many_cond at the exit of a process that counted
 * PAPI's perf software events, and in a page fault of another process while the keys were being
 * switched on). With the keys switched on before a second CPU exists and held on, no process's
 * events patch text. It costs every context switch and page fault a check, in every tool alike.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    int held = 0;

    for (unsigned long id = 0; id < PERF_COUNT_SW_MAX; id++) {
        struct perf_event_attr attr;

        if (id == PERF_COUNT_SW_BPF_OUTPUT) {
            continue; /* not a counter: it cannot be opened this way */
        }
        memset(&attr, 0, sizeof(attr));
        attr.type = PERF_TYPE_SOFTWARE;
        attr.size = sizeof(attr);
        attr.config = id;
        attr.inherit = 1;
        if (syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0) >= 0) {
            held++;
        }
    }
    if (held == 0) {
        perror("hold_perf_keys: perf_event_open");
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("hold_perf_keys: fork");
        return 1;
    }
    if (child > 0) {
        return 0; /* the child's inherited events hold the keys: the count never reaches 0 */
    }
    /* Let go of the caller's output, which it reads to its end. */
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
    }
    setsid();
    for (;;) {
        pause();
    }
}
