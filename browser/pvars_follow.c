/*
 * --follow: streams the events of a command as they happen. Events are delivered inside the
 * process that raises them, so the browser runs the command with its agent preloaded
 * (pvars_follow_agent.c, libibmsg-pvars-follow.so) and copies the lines the agent writes into a
 * pipe to its own standard output; the command's standard output goes to standard error, so
 * standard output carries the events alone. Every process of the command's tree that loads the
 * shared libibmsg is followed (LD_PRELOAD is inherited); a program linked to the static library
 * is not. The exit status is the command's (128 + the signal that ended it).
 */
#include <ibmsg/status.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "browser/pvars.h"

#define PVARS_FOLLOW_AGENT_ENV "IBMSG_PVARS_FOLLOW_AGENT"

/* The agent of the build tree if it exists, else the installed one; the environment overrides. */
static const char *pvars_follow_agent(void)
{
    const char *agent = getenv(PVARS_FOLLOW_AGENT_ENV);

    if (agent != NULL && agent[0] != '\0') {
        return agent;
    }
    return access(PVARS_FOLLOW_AGENT_BUILD, R_OK) == 0 ? PVARS_FOLLOW_AGENT_BUILD
                                                       : PVARS_FOLLOW_AGENT_INSTALL;
}

/* In the child: the agent preloaded, told where to write, then the command. Never returns. */
static void pvars_follow_exec(const pvars_state_t *st, int fd)
{
    const char *agent = pvars_follow_agent();
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(agent) + (old != NULL ? strlen(old) : 0) + 2;
    char *preload = malloc(len);
    char fd_text[16];

    if (preload == NULL) {
        _exit(127);
    }
    snprintf(preload, len, "%s%s%s", agent, old != NULL && old[0] ? ":" : "",
             old != NULL ? old : "");
    snprintf(fd_text, sizeof(fd_text), "%d", fd);
    setenv("LD_PRELOAD", preload, 1);
    setenv("IBMSG_PVARS_FOLLOW_FD", fd_text, 1);
    setenv("IBMSG_PVARS_FOLLOW_JSON", st->json ? "1" : "0", 1);
    if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        _exit(127);
    }
    execvp(st->follow_argv[0], st->follow_argv);
    fprintf(stderr, "ibmsg_pvars: --follow: cannot run %s: %s\n", st->follow_argv[0],
            strerror(errno));
    _exit(127);
}

int pvars_follow(const pvars_state_t *st, int *exit_status)
{
    int fds[2], status = 0;
    char buf[4096];
    ssize_t n;

    if (pipe(fds) != 0) {
        fprintf(stderr, "ibmsg_pvars: --follow: pipe: %s\n", strerror(errno));
        return IBMSG_ERR_IO;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "ibmsg_pvars: --follow: fork: %s\n", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return IBMSG_ERR_IO;
    }
    if (pid == 0) {
        close(fds[0]);
        pvars_follow_exec(st, fds[1]);
    }
    close(fds[1]);
    /* Until every process that holds the pipe (the command and its children) has ended. */
    while ((n = read(fds[0], buf, sizeof(buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n || fflush(stdout) != 0) {
            break; /* nobody reads our output: stop copying, still wait for the command */
        }
    }
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "ibmsg_pvars: --follow: waitpid: %s\n", strerror(errno));
            return IBMSG_ERR_IO;
        }
    }
    *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return IBMSG_OK;
}
