/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* coop.c - several event loops on one thread (coop.h).
 *
 * Each task has a ucontext and a stack; the coop's thread runs the
 * scheduler (flux_coop_run) on its own stack.  A task that would block
 * registers the fd it waits for (its loop's backend fd: an epoll fd,
 * readable while the loop has an event) in the coop's epoll set, notes
 * when its next timer is due, and switches back to the scheduler, which
 * polls the set for every waiting task at once.  A task whose loop has
 * work at once yields all the same at each turn, so that one busy loop
 * does not starve the others.
 *
 * Under AddressSanitizer every switch is announced (the fiber API), or
 * it would take the other stacks for overflows.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "coop.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define fiber_start(save, bottom, size) \
    __sanitizer_start_switch_fiber ((save), (bottom), (size))
#define fiber_finish(save, bottom, size) \
    __sanitizer_finish_switch_fiber ((save), (bottom), (size))
#else
#define fiber_start(save, bottom, size) ((void)(save), (void)(bottom))
#define fiber_finish(save, bottom, size) ((void)(save), (void)(bottom))
#endif

/* flux_coop_poll() over several fds looks again this often (ms) */
#define COOP_POLL_MS 5

/* Save the current context in from and resume to.  Under
 * AddressSanitizer, swapcontext()'s interceptor prints a warning on
 * stderr (which ends up in jobs' output): the same with getcontext() and
 * setcontext(), which it leaves alone (the fiber calls around every
 * switch are what it needs). */
static void ctx_switch (ucontext_t *from, ucontext_t *to)
{
#if defined(__SANITIZE_ADDRESS__)
    volatile int resumed = 0;

    getcontext (from);
    if (!resumed) {
        resumed = 1;
        setcontext (to);
    }
#else
    swapcontext (from, to);
#endif
}

#define STACK_DEFAULT ((size_t)8 << 20)
#define GUARD_SIZE ((size_t)64 << 10)

struct task {
    struct flux_coop *c;
    ucontext_t ctx;
    void *map; /* the stack's mapping, guard included */
    size_t map_size;
    void *fake; /* AddressSanitizer's fake stack, while switched out */
    flux_coop_f fn;
    void *arg;
    bool done;
    bool runnable;
    int nowait;       /* in a UV_RUN_NOWAIT run: never yield */
    int fd;           /* registered in c->epfd, or -1 */
    int64_t deadline; /* ns (CLOCK_MONOTONIC) to resume at, or -1 */
    struct task *next;
};

struct flux_coop {
    int epfd;
    int wakefd; /* readable: a spawn is pending */
    pthread_mutex_t lock;
    struct task *pending; /* spawned, not started (under lock) */
    struct task *tasks;   /* started: c's thread only */
    atomic_int count;     /* spawned and not finished */
    ucontext_t main;
    void *main_fake; /* AddressSanitizer: the scheduler's stack */
    const void *main_bottom;
    size_t main_size;
};

static __thread struct task *current;

static int64_t now_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

flux_coop_t *flux_coop_create (void)
{
    struct flux_coop *c;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};

    if (!(c = calloc (1, sizeof (*c))))
        return NULL;
    c->epfd = c->wakefd = -1;
    pthread_mutex_init (&c->lock, NULL);
    if ((c->epfd = epoll_create1 (EPOLL_CLOEXEC)) < 0
        || (c->wakefd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0
        || epoll_ctl (c->epfd, EPOLL_CTL_ADD, c->wakefd, &ev) < 0) {
        flux_coop_destroy (c);
        return NULL;
    }
    return c;
}

static void task_free (struct task *t)
{
    if (t) {
        if (t->map)
            munmap (t->map, t->map_size);
        free (t);
    }
}

void flux_coop_destroy (flux_coop_t *c)
{
    if (c) {
        int saved_errno = errno;
        struct task *t;
        while ((t = c->pending)) {
            c->pending = t->next;
            task_free (t);
        }
        while ((t = c->tasks)) {
            c->tasks = t->next;
            task_free (t);
        }
        if (c->epfd >= 0)
            close (c->epfd);
        if (c->wakefd >= 0)
            close (c->wakefd);
        pthread_mutex_destroy (&c->lock);
        free (c);
        errno = saved_errno;
    }
}

int flux_coop_spawn (flux_coop_t *c, flux_coop_f fn, void *arg,
                     size_t stack_size)
{
    struct task *t;
    uint64_t one = 1;

    if (!c || !fn) {
        errno = EINVAL;
        return -1;
    }
    if (!(t = calloc (1, sizeof (*t))))
        return -1;
    t->c = c;
    t->fn = fn;
    t->arg = arg;
    t->fd = -1;
    t->deadline = -1;
    t->map_size = (stack_size ? stack_size : STACK_DEFAULT) + GUARD_SIZE;
    t->map
        = mmap (NULL, t->map_size, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (t->map == MAP_FAILED) {
        t->map = NULL;
        task_free (t);
        return -1;
    }
    /* the stack grows down: the guard at the bottom faults an overflow */
    if (mprotect (t->map, GUARD_SIZE, PROT_NONE) < 0) {
        task_free (t);
        return -1;
    }
    atomic_fetch_add (&c->count, 1);
    pthread_mutex_lock (&c->lock);
    t->next = c->pending;
    c->pending = t;
    pthread_mutex_unlock (&c->lock);
    if (write (c->wakefd, &one, sizeof (one)) < 0) {
        /* cannot overflow: read back at every turn */
    }
    return 0;
}

int flux_coop_count (flux_coop_t *c)
{
    return c ? atomic_load (&c->count) : 0;
}

int flux_coop_in_task (void)
{
    return current != NULL;
}

static void trampoline (void)
{
    struct task *t = current;
    struct flux_coop *c = t->c;

    fiber_finish (NULL, &c->main_bottom, &c->main_size);
    t->fn (t->arg);
    t->done = true;
    current = NULL;
    fiber_start (NULL, c->main_bottom, c->main_size); /* this one dies */
    /* returning resumes uc_link: the scheduler */
}

static int task_start (struct flux_coop *c, struct task *t)
{
    if (getcontext (&t->ctx) < 0)
        return -1;
    t->ctx.uc_stack.ss_sp = (char *)t->map + GUARD_SIZE;
    t->ctx.uc_stack.ss_size = t->map_size - GUARD_SIZE;
    t->ctx.uc_link = &c->main;
    makecontext (&t->ctx, trampoline, 0);
    t->runnable = true;
    return 0;
}

/* Back to the scheduler; runnable: to be resumed at its next turn. */
static void task_switch_out (struct task *t, bool runnable)
{
    struct flux_coop *c = t->c;

    t->runnable = runnable;
    current = NULL;
    fiber_start (&t->fake, c->main_bottom, c->main_size);
    ctx_switch (&t->ctx, &c->main);
    fiber_finish (t->fake, &c->main_bottom, &c->main_size);
    current = t;
}

/* Yield until fd is readable or timeout_ms (-1: none) passed. */
static void task_wait_fd (struct task *t, int fd, int timeout_ms)
{
    if (fd != t->fd) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = t};
        if (t->fd >= 0)
            (void)epoll_ctl (t->c->epfd, EPOLL_CTL_DEL, t->fd, NULL);
        t->fd = -1;
        if (fd >= 0) {
            if (epoll_ctl (t->c->epfd, EPOLL_CTL_ADD, fd, &ev) == 0)
                t->fd = fd;
            else if (timeout_ms < 0 || timeout_ms > 1)
                timeout_ms = 1; /* cannot watch it: look again soon */
        }
    }
    t->deadline
        = timeout_ms >= 0 ? now_ns () + (int64_t)timeout_ms * 1000000 : -1;
    task_switch_out (t, false);
    t->deadline = -1;
}

int flux_coop_wait_fd (int fd, int timeout_ms)
{
    struct task *t = current;

    if (!t) {
        errno = EINVAL;
        return -1;
    }
    task_wait_fd (t, fd, timeout_ms);
    /* rare (synchronous RPCs), and fd may be closed before the next
     * wait, its number reused: do not keep it */
    if (t->fd >= 0) {
        (void)epoll_ctl (t->c->epfd, EPOLL_CTL_DEL, t->fd, NULL);
        t->fd = -1;
    }
    return 0;
}

int flux_coop_poll (struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
    struct task *t = current;
    int64_t deadline;

    if (!t)
        return poll (fds, nfds, timeout_ms);
    deadline = timeout_ms >= 0 ? now_ns () + (int64_t)timeout_ms * 1000000 : -1;
    for (;;) {
        int64_t left;
        int ms, rc;

        if ((rc = poll (fds, nfds, 0)) != 0)
            return rc;
        left = deadline >= 0 ? deadline - now_ns () : -1;
        if (deadline >= 0 && left <= 0)
            return 0;
        ms = left < 0 ? -1 : (int)((left + 999999) / 1000000);
        if (nfds == 1 && fds[0].fd >= 0 && fds[0].events == POLLIN)
            (void)flux_coop_wait_fd (fds[0].fd, ms);
        else
            task_wait_fd (t, -1,
                          ms < 0 || ms > COOP_POLL_MS ? COOP_POLL_MS : ms);
    }
}

int flux_coop_uv_run (uv_loop_t *loop, uv_run_mode mode)
{
    struct task *t = current;
    int rc;

    if (!t || mode != UV_RUN_NOWAIT)
        return uv_run (loop, mode);
    t->nowait++;
    rc = uv_run (loop, UV_RUN_NOWAIT);
    t->nowait--;
    return rc;
}

struct flux_coop_loop {
    uv_prepare_t prep;
    uv_poll_t kick_w;
    int kickfd;
    bool kicked;
    int closing; /* handles whose close has not called back */
};

static void kick_cb (uv_poll_t *w, int status, int events)
{
    struct flux_coop_loop *cl = w->data;
    uint64_t val;

    if (read (cl->kickfd, &val, sizeof (val)) < 0) {
        /* read already */
    }
    cl->kicked = false;
}

/* Make the loop's next poll return at once. */
static void kick (struct flux_coop_loop *cl)
{
    uint64_t one = 1;

    if (!cl->kicked && write (cl->kickfd, &one, sizeof (one)) == sizeof (one))
        cl->kicked = true;
}

/* Whether the loop has fds to add to (or change in) its epoll set before
 * it polls: uv_backend_timeout() then says 0 whatever the poll's timeout
 * will be.  (libuv's private field, the same first word in 1.x: a list
 * head whose next pointer points at itself when empty.) */
static bool watchers_pending (uv_loop_t *loop)
{
    void **q = (void **)&loop->watcher_queue;
    return *q != (void *)q;
}

/* The loop is about to poll, for as long as its next timer allows, or
 * for ever.  Wait for that here, yielding, so that the poll finds an
 * event ready or its timer due.  With fds still to add to the loop's
 * epoll set the poll's timeout is not known: yield, then kick the loop
 * so that its poll cannot block. */
static void prep_cb (uv_prepare_t *w)
{
    struct flux_coop_loop *cl = w->data;
    struct task *t = current;
    int timeout;

    if (!t || t->nowait > 0)
        return;
    if (watchers_pending (w->loop)) {
        task_switch_out (t, true);
        kick (cl);
    }
    else if ((timeout = uv_backend_timeout (w->loop)) == 0)
        task_switch_out (t, true); /* the others' turn */
    else {
        task_wait_fd (t, uv_backend_fd (w->loop), timeout);
        uv_update_time (w->loop); /* a timer that woke it is due now */
    }
}

struct flux_coop_loop *flux_coop_attach (uv_loop_t *loop)
{
    struct flux_coop_loop *cl;
    int rc;

    if (!current) {
        errno = EINVAL;
        return NULL;
    }
    if (!(cl = calloc (1, sizeof (*cl))))
        return NULL;
    if ((cl->kickfd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
        free (cl);
        return NULL;
    }
    if ((rc = uv_poll_init (loop, &cl->kick_w, cl->kickfd)) < 0) {
        close (cl->kickfd);
        free (cl);
        errno = -rc;
        return NULL;
    }
    uv_prepare_init (loop, &cl->prep);
    cl->prep.data = cl->kick_w.data = cl;
    uv_prepare_start (&cl->prep, prep_cb);
    uv_unref ((uv_handle_t *)&cl->prep);
    uv_poll_start (&cl->kick_w, UV_READABLE, kick_cb);
    uv_unref ((uv_handle_t *)&cl->kick_w);
    return cl;
}

/* The last of the two handles to close frees it all. */
static void closed_cb (uv_handle_t *h)
{
    struct flux_coop_loop *cl = h->data;

    if (--cl->closing == 0) {
        close (cl->kickfd);
        free (cl);
    }
}

void flux_coop_detach (struct flux_coop_loop *cl)
{
    if (cl) {
        struct task *t = current;
        /* its fd, closed with the loop, leaves the epoll set by itself,
         * but a new loop may get the same number: forget it now */
        if (t && t->fd >= 0 && t->fd == uv_backend_fd (cl->prep.loop)) {
            (void)epoll_ctl (t->c->epfd, EPOLL_CTL_DEL, t->fd, NULL);
            t->fd = -1;
        }
        cl->closing = 2;
        uv_close ((uv_handle_t *)&cl->prep, closed_cb);
        uv_close ((uv_handle_t *)&cl->kick_w, closed_cb);
    }
}

static void take_pending (struct flux_coop *c)
{
    struct task *t, *next;
    uint64_t val;

    if (read (c->wakefd, &val, sizeof (val)) < 0) {
        /* nothing was written */
    }
    pthread_mutex_lock (&c->lock);
    t = c->pending;
    c->pending = NULL;
    pthread_mutex_unlock (&c->lock);
    for (; t; t = next) {
        next = t->next;
        if (task_start (c, t) < 0) {
            atomic_fetch_sub (&c->count, 1);
            task_free (t);
            continue;
        }
        t->next = c->tasks;
        c->tasks = t;
    }
}

/* Resume every runnable task once; forget those that finished.  The
 * earliest deadline of the waiting ones in *next (-1: none). */
static bool run_turn (struct flux_coop *c, int64_t *next)
{
    struct task **tp, *t;
    bool runnable = false;

    for (t = c->tasks; t; t = t->next) {
        if (t->runnable && !t->done) {
            current = t;
            fiber_start (&c->main_fake, (char *)t->map + GUARD_SIZE,
                         t->map_size - GUARD_SIZE);
            ctx_switch (&c->main, &t->ctx);
            fiber_finish (c->main_fake, NULL, NULL);
            current = NULL;
        }
    }
    *next = -1;
    for (tp = &c->tasks; (t = *tp);) {
        if (t->done) {
            *tp = t->next;
            if (t->fd >= 0)
                (void)epoll_ctl (c->epfd, EPOLL_CTL_DEL, t->fd, NULL);
            task_free (t);
            atomic_fetch_sub (&c->count, 1);
            continue;
        }
        if (t->runnable)
            runnable = true;
        else if (t->deadline >= 0 && (*next < 0 || t->deadline < *next))
            *next = t->deadline;
        tp = &t->next;
    }
    return runnable;
}

int flux_coop_run (flux_coop_t *c)
{
    struct epoll_event ev[64];
    bool take = true;

    if (!c || current) {
        errno = EINVAL;
        return -1;
    }
    for (;;) {
        int64_t next, now;
        int timeout, n;
        struct task *t;

        if (take)
            take_pending (c);
        take = false;
        bool runnable = run_turn (c, &next);
        if (atomic_load (&c->count) == 0)
            return 0;
        if (runnable)
            timeout = 0;
        else if (next >= 0) {
            int64_t d = next - now_ns ();
            timeout = d <= 0 ? 0 : (int)((d + 999999) / 1000000);
        }
        else
            timeout = -1;
        if ((n = epoll_wait (c->epfd, ev, 64, timeout)) < 0) {
            if (errno != EINTR)
                return -1;
            n = 0;
        }
        for (int i = 0; i < n; i++) {
            if (!ev[i].data.ptr)
                take = true;
            else
                ((struct task *)ev[i].data.ptr)->runnable = true;
        }
        now = now_ns ();
        for (t = c->tasks; t; t = t->next)
            if (!t->runnable && t->deadline >= 0 && t->deadline <= now)
                t->runnable = true;
    }
}
