// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests of /dev/twheel used by unprivileged users.
 *
 * The VM runs the selftests as root, so every test drops its privileges
 * itself: the harness forks each test, the fixture setup starts two helper
 * processes ("peers", see peer_main()) while still root -- one running as
 * another user (UID_B), one as the user under test (UID_A) -- and then
 * becomes UID_A.  The test then checks that an unprivileged user can use
 * the device, that handles name timers of their own file only, the
 * per-file and per-user limits (a user's timers are counted over all of its
 * files and processes and never against another user) including batches
 * that cross a limit, and that the module parameters cannot be written.
 *
 * The limits are learnt from TWHEEL_IOC_API.  The default per-user limit is
 * a tenth of RAM (hundreds of thousands of timers), too many to reach
 * quickly in a TCG VM with KASAN, so the limit tests skip above LIMIT_MAX;
 * the selftest plan reloads twheel with small limits and runs this program
 * once more.
 *
 * Nothing waits by sleeping: events are waited for with poll() bounded by
 * EVENT_WAIT_MS, and the peers answer each request over a pipe.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/twheel.h>

#include "kselftest_harness.h"
#include "twheel_utils.h"

#define PARAM_DIR		"/sys/module/twheel/parameters"
#define UID_A			65534	/* the user under test ("nobody") */
#define UID_B			65533	/* another unprivileged user */
#define FAR			(3600 * NSEC_PER_SEC)
/* Bound for an event that must come.  Generous: TCG, KASAN, lockdep. */
#define EVENT_WAIT_MS		10000
/* Limits above this are not filled here (too slow under TCG and KASAN). */
#define LIMIT_MAX		20000
#define MAX_FILES		8
#define BATCH			512
#define PEER_COOKIE		0xbeef000000000000ULL
#define PEER_HANDLES		8

/* ---- ioctl wrappers: 0 or -errno ---- */

/*
 * Arm @n one-hour timers on @fd, @max_batch at a time, cookies @cookie,
 * @cookie + 1...  Returns how many were armed; *err gets the result of the
 * first record that failed (0 if none did), *first the first handle.
 */
static uint64_t arm_many(int fd, uint64_t n, uint64_t cookie, int *err,
			 uint64_t *first)
{
	struct twheel_batch_op ops[BATCH];
	uint64_t armed = 0, i;

	*err = 0;
	while (n) {
		uint32_t k = n < BATCH ? n : BATCH, j;
		long r;

		for (j = 0; j < k; j++)
			op_set(&ops[j], TWHEEL_OP_ARM, 0, FAR, cookie + j);
		r = _test_ioctl_batch(fd, ops, k, NULL);
		if (r < 0) {
			*err = r;
			return armed;
		}
		for (i = 0; i < (uint64_t)r; i++) {
			if (ops[i].out_result) {
				if (!*err)
					*err = ops[i].out_result;
				continue;
			}
			if (!armed++ && first)
				*first = ops[i].handle;
		}
		if (r != k) {
			*err = *err ? *err : -EIO;
			return armed;
		}
		n -= k;
		cookie += k;
	}
	return armed;
}

/* Wait (bounded) for one event and read it: 0 or -errno. */
static int read_event(int fd, struct twheel_event *ev)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t r;

	if (poll(&p, 1, EVENT_WAIT_MS) != 1)
		return -ETIMEDOUT;
	r = read(fd, ev, sizeof(*ev));
	if (r < 0)
		return -errno;
	return r == sizeof(*ev) ? 0 : -EIO;
}

/* Become @uid (and gid @uid) without any supplementary group. */
static int become(uid_t uid)
{
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
		return -errno;
	/*
	 * Changing credentials made the process non-dumpable, which gives
	 * its /proc/self files to root: fdinfo would be unreadable.
	 */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ? -errno : 0;
}

/* ---- peers: helper processes of another user or of the same user ---- */

enum { PEER_OPEN = 1, PEER_ARM, PEER_CHECK };

struct peer_req {
	uint32_t op;
	uint32_t file;		/* index of the peer's file */
	uint64_t n;		/* PEER_ARM: timers to arm */
};

struct peer_rep {
	int64_t ret;		/* 0 or -errno (PEER_ARM: the first failure) */
	uint64_t armed;		/* PEER_ARM: timers armed */
	uint64_t h[PEER_HANDLES];	/* PEER_ARM: the first handles armed */
};

struct peer {
	pid_t pid;
	int req;		/* write end of the request pipe */
	int rep;		/* read end of the reply pipe */
};

struct peer_file {
	int fd;
	uint64_t n;		/* timers armed */
	uint64_t *h;		/* their handles; cookie of h[i] is ...+ i */
};

/* Every timer the peer armed is still pending with its cookie. */
static int peer_check(struct peer_file *pf)
{
	uint64_t i;
	int f;

	for (f = 0; f < MAX_FILES; f++) {
		if (pf[f].fd < 0)
			continue;
		if (fd_timers(pf[f].fd) != (long)pf[f].n) {
			fprintf(stderr, "# peer %d: file %d has %ld timers, not %llu\n",
				getpid(), f, fd_timers(pf[f].fd),
				(unsigned long long)pf[f].n);
			return -EBADFD;
		}
		for (i = 0; i < pf[f].n; i++) {
			struct twheel_query q;
			int r = _test_ioctl_query(pf[f].fd, pf[f].h[i], &q);

			if (r || !(q.out_state & TWHEEL_QUERY_PENDING) ||
			    q.out_cookie != (PEER_COOKIE | (uint64_t)f << 32) + i) {
				fprintf(stderr,
					"# peer %d: timer %#llx: %d, state %u, cookie %#llx\n",
					getpid(), (unsigned long long)pf[f].h[i],
					r, q.out_state, (unsigned long long)q.out_cookie);
				return -EBADFD;
			}
		}
	}
	return 0;
}

static int peer_arm(struct peer_file *pf, int file, uint64_t n,
		    struct peer_rep *rep)
{
	uint64_t cookie = (PEER_COOKIE | (uint64_t)file << 32) + pf->n;
	struct twheel_batch_op op;
	uint64_t *h;

	h = realloc(pf->h, (pf->n + n) * sizeof(*h));
	if (!h && pf->n + n)
		return -ENOMEM;
	pf->h = h;
	/* One record at a time: the reply reports exactly the first failure. */
	while (rep->armed < n) {
		op_set(&op, TWHEEL_OP_ARM, 0, FAR, cookie + rep->armed);
		if (_test_ioctl_batch(pf->fd, &op, 1, NULL) != 1)
			return -errno;
		if (op.out_result)
			return op.out_result;
		pf->h[pf->n++] = op.handle;
		if (rep->armed < PEER_HANDLES)
			rep->h[rep->armed] = op.handle;
		rep->armed++;
	}
	return 0;
}

/*
 * The peer's loop: it becomes @uid, then serves requests until the test
 * closes the pipe.  Its timers are armed with cookie PEER_COOKIE | file << 32
 * plus their index.
 */
static int peer_main(uid_t uid, int rd, int wr)
{
	struct peer_file pf[MAX_FILES];
	struct peer_req req;
	struct peer_rep rep;
	int f;

	for (f = 0; f < MAX_FILES; f++)
		pf[f] = (struct peer_file){ .fd = -1 };
	if (become(uid))
		return 2;
	while (read(rd, &req, sizeof(req)) == sizeof(req)) {
		memset(&rep, 0, sizeof(rep));
		if (req.file >= MAX_FILES) {
			rep.ret = -EINVAL;
		} else if (req.op == PEER_OPEN) {
			pf[req.file].fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
			rep.ret = pf[req.file].fd < 0 ? -errno : 0;
		} else if (req.op == PEER_ARM) {
			rep.ret = peer_arm(&pf[req.file], req.file, req.n, &rep);
		} else if (req.op == PEER_CHECK) {
			rep.ret = peer_check(pf);
		} else {
			rep.ret = -EINVAL;
		}
		if (write(wr, &rep, sizeof(rep)) != sizeof(rep))
			return 3;
	}
	return 0;
}

static int peer_start(struct peer *p, uid_t uid)
{
	int to[2], from[2];

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		return -errno;
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (!p->pid) {
		int fd;

		/*
		 * Only its own pipe ends: a copy of another peer's request
		 * pipe would keep that peer from seeing the end of the test.
		 */
		for (fd = 3; fd < 1024; fd++)
			if (fd != to[0] && fd != from[1])
				close(fd);
		_exit(peer_main(uid, to[0], from[1]));
	}
	close(to[0]);
	close(from[1]);
	p->req = to[1];
	p->rep = from[0];
	return 0;
}

/* Send a request and wait for the answer: 0, or -EPIPE if the peer died. */
static int peer_call(struct peer *p, uint32_t op, uint32_t file, uint64_t n,
		     struct peer_rep *rep)
{
	struct peer_req req = { .op = op, .file = file, .n = n };

	if (write(p->req, &req, sizeof(req)) != sizeof(req))
		return -EPIPE;
	if (read(p->rep, rep, sizeof(*rep)) != sizeof(*rep))
		return -EPIPE;
	return 0;
}

/* Close the pipes, reap the peer; its exit status, or -1. */
static int peer_stop(struct peer *p)
{
	int status;

	if (p->pid <= 0)
		return 0;
	close(p->req);
	close(p->rep);
	if (waitpid(p->pid, &status, 0) != p->pid || !WIFEXITED(status))
		return -1;
	p->pid = 0;
	return WEXITSTATUS(status);
}

/* ---- the fixture: a file of UID_A, a peer of UID_B and one of UID_A ---- */

FIXTURE(unpriv) {
	int fd;			/* opened by UID_A */
	int rootfd;		/* opened by root, -1 when not run as root */
	bool switched;		/* privileges dropped, the peers run */
	struct twheel_api api;
	struct peer other;	/* another user: UID_B */
	struct peer same;	/* another process of UID_A */
};

FIXTURE_SETUP(unpriv)
{
	self->fd = -1;
	self->rootfd = -1;
	if (geteuid() == 0) {
		ASSERT_EQ(0, peer_start(&self->other, UID_B));
		ASSERT_EQ(0, peer_start(&self->same, UID_A));
		self->rootfd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, self->rootfd) TH_LOG("open as root: %s", strerror(errno));
		ASSERT_EQ(0, become(UID_A)) TH_LOG("setuid(%d): %s", UID_A, strerror(errno));
		self->switched = true;
	}
	self->fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s as uid %d: %s", TWHEEL_DEV,
				      getuid(), strerror(errno));
	test_ioctl_api(self->fd, &self->api);
	ASSERT_EQ(TWHEEL_ABI_VERSION, self->api.out_abi_version);
}

FIXTURE_TEARDOWN(unpriv)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->rootfd >= 0)
		close(self->rootfd);
	EXPECT_EQ(0, peer_stop(&self->other));
	EXPECT_EQ(0, peer_stop(&self->same));
}

/* Skip when the limit tests cannot run here; true if they can. */
static bool limit_reachable(struct __test_metadata *_metadata,
			    const char *what, uint64_t lim)
{
	if (!lim)
		SKIP(return false, "no %s limit", what);
	if (lim > LIMIT_MAX)
		SKIP(return false,
		     "%s limit %llu: too many timers to reach quickly (the selftest plan reloads twheel with small limits for this)",
		     what, (unsigned long long)lim);
	return true;
}

/*
 * Arm @total timers of the user over new files of its own, at most
 * @per_file in each: fills @fds, returns the number of files.
 */
static int spread(struct __test_metadata *_metadata, uint64_t total,
		  uint64_t per_file, int *fds, uint64_t *first)
{
	int nf = 0, err;

	while (total) {
		uint64_t k = total < per_file ? total : per_file;

		ASSERT_GT(MAX_FILES, nf);
		fds[nf] = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[nf]);
		ASSERT_EQ(k, arm_many(fds[nf], k, 1000 * nf, &err, &first[nf]))
			TH_LOG("file %d: %s", nf, strerror(-err));
		total -= k;
		nf++;
	}
	return nf;
}

static void close_all(int *fds, int n)
{
	while (n--)
		if (fds[n] >= 0)
			close(fds[n]);
}

/* ---- the device node ---- */

TEST(dev_node_mode_0666)
{
	struct stat st;

	ASSERT_EQ(0, stat(TWHEEL_DEV, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0666, st.st_mode & 07777);
}

/* The fixture really runs unprivileged: it cannot get root back. */
TEST_F(unpriv, privileges_dropped)
{
	if (!self->switched)
		SKIP(return, "not run as root: no users to switch between");
	EXPECT_EQ(UID_A, getuid());
	EXPECT_EQ(UID_A, geteuid());
	EXPECT_EQ(UID_A, getgid());
	EXPECT_EQ(-1, setuid(0));
	EXPECT_EQ(EPERM, errno);
}

/* An unprivileged user arms, modifies, queries, cancels and reads. */
TEST_F(unpriv, own_timers_work)
{
	uint64_t ms20 = 20 * NSEC_PER_MSEC, period, h1, h2, h3, hp;
	struct twheel_batch_op ops[2];
	struct twheel_event ev;
	struct twheel_query q;
	uint32_t st, done;
	int i;

	period = 10 * NSEC_PER_MSEC < self->api.out_tick_ns ? self->api.out_tick_ns :
							  10 * NSEC_PER_MSEC;
	test_ioctl_arm(self->fd, 0, ms20, 0, 0, 1, &h1);
	test_ioctl_arm(self->fd, 0, FAR, 0, 0, 2, &h2);
	EXPECT_NE(h1, h2);
	ASSERT_EQ(0, read_event(self->fd, &ev));
	EXPECT_EQ(h1, ev.handle);
	EXPECT_EQ(1, ev.cookie);
	EXPECT_LE(ev.expires, ev.fired);
	/* a one-shot ends once read */
	EXPECT_EQ(-ENOENT, _test_ioctl_query(self->fd, h1, &q));

	test_ioctl_modify(self->fd, h2, 0, ms20, 0, 0, 3);
	ASSERT_EQ(0, read_event(self->fd, &ev));
	EXPECT_EQ(h2, ev.handle);
	EXPECT_EQ(3, ev.cookie);

	test_ioctl_arm(self->fd, 0, FAR, 0, 0, 4, &h3);
	test_ioctl_query(self->fd, h3, &q);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	EXPECT_EQ(4, q.out_cookie);
	test_ioctl_cancel(self->fd, h3, &st);
	EXPECT_EQ(TWHEEL_CANCEL_PENDING, st);
	EXPECT_EQ(-ENOENT, _test_ioctl_cancel(self->fd, h3, &st));

	test_ioctl_arm(self->fd, 0, period, period, 0, 5, &hp);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, read_event(self->fd, &ev));
		EXPECT_EQ(hp, ev.handle);
		EXPECT_EQ(5, ev.cookie);
		EXPECT_EQ(TWHEEL_EVENT_PERIODIC, ev.flags);
	}
	test_ioctl_cancel(self->fd, hp, NULL);

	op_set(&ops[0], TWHEEL_OP_ARM, 0, FAR, 6);
	op_set(&ops[1], TWHEEL_OP_ARM, 0, FAR, 7);
	ASSERT_EQ(2, _test_ioctl_batch(self->fd, ops, 2, &done));
	EXPECT_EQ(2, done);
	EXPECT_EQ(0, ops[0].out_result);
	EXPECT_EQ(0, ops[1].out_result);
	EXPECT_EQ(2, fd_timers(self->fd));
	op_set(&ops[0], TWHEEL_OP_CANCEL, ops[0].handle, 0, 0);
	op_set(&ops[1], TWHEEL_OP_CANCEL, ops[1].handle, 0, 0);
	ASSERT_EQ(2, _test_ioctl_batch(self->fd, ops, 2, &done));
	EXPECT_EQ(RESULT_POISON, ops[0].out_result);
	EXPECT_EQ(RESULT_POISON, ops[1].out_result);
	EXPECT_EQ(0, fd_timers(self->fd));
}

/*
 * @foreign is a handle of someone else's file.  On @fd it is ENOENT for
 * every operation -- unless @fd has a timer of its own with the same value
 * (handle numbers are per file), which it then names, never the foreign
 * one: @own and @own_cookie say which.  Returns true if it was ENOENT.
 */
static bool foreign_handle(struct __test_metadata *_metadata, int fd,
			   uint64_t foreign, uint64_t own, uint64_t own_cookie)
{
	struct twheel_batch_op ops[3];
	struct twheel_query q;
	uint32_t done;

	if (foreign == own) {
		EXPECT_EQ(0, _test_ioctl_query(fd, foreign, &q));
		EXPECT_EQ(own_cookie, q.out_cookie);
		return false;
	}
	EXPECT_EQ(-ENOENT, _test_ioctl_query(fd, foreign, &q));
	/* a modify of the foreign timer would make it fire now */
	EXPECT_EQ(-ENOENT, _test_ioctl_modify(fd, foreign, 0, 0, 0, 0, 99));
	EXPECT_EQ(-ENOENT, _test_ioctl_cancel(fd, foreign, NULL));
	op_set(&ops[0], TWHEEL_OP_MODIFY, foreign, 0, 99);
	op_set(&ops[1], TWHEEL_OP_CANCEL, foreign, 0, 0);
	op_set(&ops[2], TWHEEL_OP_MODIFY, foreign, FAR, 99);
	EXPECT_EQ(3, _test_ioctl_batch(fd, ops, 3, &done));
	EXPECT_EQ(3, done);
	EXPECT_EQ(-ENOENT, ops[0].out_result);
	EXPECT_EQ(-ENOENT, ops[1].out_result);
	EXPECT_EQ(-ENOENT, ops[2].out_result);
	return true;
}

/* Handles of another file of the same process name nothing in this one. */
TEST_F(unpriv, other_file_handles_enoent)
{
	uint64_t h[6], g;
	struct twheel_query q;
	int fd2, i, enoent = 0;

	fd2 = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	for (i = 0; i < 6; i++)
		test_ioctl_arm(self->fd, 0, FAR, 0, 0, 10 + i, &h[i]);
	test_ioctl_arm(fd2, 0, FAR, 0, 0, 20, &g);
	for (i = 0; i < 6; i++)
		enoent += foreign_handle(_metadata, fd2, h[i], g, 20);
	EXPECT_LE(5, enoent);
	/* the first file's timers are untouched */
	for (i = 0; i < 6; i++) {
		test_ioctl_query(self->fd, h[i], &q);
		EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
		EXPECT_EQ(10 + i, q.out_cookie);
	}
	EXPECT_EQ(6, fd_timers(self->fd));
	EXPECT_EQ(1, fd_timers(fd2));
	close(fd2);
}

/* Handles of a file of another process (@p) name nothing in ours. */
static void foreign_process(struct __test_metadata *_metadata, int fd,
			    struct peer *p)
{
	struct peer_rep rep;
	struct twheel_query q;
	int i, enoent = 0;
	uint64_t mine;

	test_ioctl_arm(fd, 0, FAR, 0, 0, 1, &mine);
	ASSERT_EQ(0, peer_call(p, PEER_OPEN, 0, 0, &rep));
	ASSERT_EQ(0, rep.ret);
	ASSERT_EQ(0, peer_call(p, PEER_ARM, 0, PEER_HANDLES, &rep));
	ASSERT_EQ(0, rep.ret) TH_LOG("peer arm: %s", strerror(-rep.ret));
	ASSERT_EQ(PEER_HANDLES, rep.armed);
	for (i = 0; i < PEER_HANDLES; i++)
		enoent += foreign_handle(_metadata, fd, rep.h[i], mine, 1);
	EXPECT_LE(PEER_HANDLES - 1, enoent);
	/* the peer's timers are all still armed, with their cookies */
	ASSERT_EQ(0, peer_call(p, PEER_CHECK, 0, 0, &rep));
	EXPECT_EQ(0, rep.ret);
	test_ioctl_query(fd, mine, &q);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	EXPECT_EQ(1, fd_timers(fd));
}

TEST_F(unpriv, other_user_handles_enoent)
{
	if (!self->switched)
		SKIP(return, "not run as root: cannot start another user's process");
	foreign_process(_metadata, self->fd, &self->other);
}

TEST_F(unpriv, same_user_other_process_handles_enoent)
{
	if (!self->switched)
		SKIP(return, "not run as root: cannot start the peer process");
	foreign_process(_metadata, self->fd, &self->same);
}

/*
 * The per-user limit counts every file and process of the user, is charged
 * to a file's opener, and does not touch another user; freed timers (cancel,
 * close) make exactly as much room again.
 */
TEST_F(unpriv, user_limit_across_files)
{
	uint64_t lim = self->api.out_max_timers_per_user;
	uint64_t per_fd = self->api.out_max_timers_per_fd;
	uint64_t per, first[MAX_FILES], h, k, b_left;
	int fds[MAX_FILES], nf, fd3, i, err, f;
	struct twheel_batch_op op;
	struct peer_rep rep;

	if (!self->switched)
		SKIP(return, "not run as root: cannot switch users");
	if (!limit_reachable(_metadata, "per-user", lim))
		return;
	/* at least two files, each within the per-file limit */
	per = per_fd < lim ? per_fd : (lim + 1) / 2;
	nf = spread(_metadata, lim, per, fds, first);
	ASSERT_LE(2, nf);

	/* at the limit on every file of the user, old and new */
	fd3 = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd3);
	for (i = 0; i < nf; i++)
		EXPECT_EQ(-ENOSPC, _test_ioctl_arm(fds[i], 0, FAR, 0, 0, 1, &h));
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(fd3, 0, FAR, 0, 0, 1, &h));
	op_set(&op, TWHEEL_OP_ARM, 0, FAR, 1);
	EXPECT_EQ(1, _test_ioctl_batch(fd3, &op, 1, NULL));
	EXPECT_EQ(-ENOSPC, op.out_result);
	/* ...and in another process of the user */
	ASSERT_EQ(0, peer_call(&self->same, PEER_OPEN, 0, 0, &rep));
	ASSERT_EQ(0, peer_call(&self->same, PEER_ARM, 0, 1, &rep));
	EXPECT_EQ(-ENOSPC, rep.ret);
	EXPECT_EQ(0, rep.armed);

	/* another user has its whole limit: exactly lim timers */
	b_left = lim;
	for (f = 0; b_left && f < MAX_FILES; f++) {
		k = b_left < per ? b_left : per;
		ASSERT_EQ(0, peer_call(&self->other, PEER_OPEN, f, 0, &rep));
		ASSERT_EQ(0, rep.ret);
		ASSERT_EQ(0, peer_call(&self->other, PEER_ARM, f, k, &rep));
		EXPECT_EQ(0, rep.ret) TH_LOG("other user, file %d: %s", f,
					     strerror(-rep.ret));
		EXPECT_EQ(k, rep.armed);
		b_left -= k;
	}
	ASSERT_EQ(0, b_left);
	ASSERT_EQ(0, peer_call(&self->other, PEER_ARM, 0, 1, &rep));
	EXPECT_EQ(-ENOSPC, rep.ret);

	/* a file opened by root is charged to root, whoever uses it */
	test_ioctl_arm(self->rootfd, 0, FAR, 0, 0, 1, &h);
	test_ioctl_cancel(self->rootfd, h, NULL);

	/* one cancel makes room for one timer, in any process of the user */
	test_ioctl_cancel(fds[0], first[0], NULL);
	ASSERT_EQ(0, peer_call(&self->same, PEER_ARM, 0, 1, &rep));
	EXPECT_EQ(0, rep.ret);
	EXPECT_EQ(1, rep.armed);
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(fd3, 0, FAR, 0, 0, 1, &h));

	/* closing a file gives its timers back: exactly k */
	k = fd_timers(fds[nf - 1]);
	ASSERT_LT(0, k);
	close(fds[nf - 1]);
	fds[nf - 1] = -1;
	EXPECT_EQ(k, arm_many(fd3, k + 1, 0, &err, &h));
	EXPECT_EQ(-ENOSPC, err);
	EXPECT_EQ(k, fd_timers(fd3));

	/* the peers' timers are intact */
	ASSERT_EQ(0, peer_call(&self->other, PEER_CHECK, 0, 0, &rep));
	EXPECT_EQ(0, rep.ret);
	ASSERT_EQ(0, peer_call(&self->same, PEER_CHECK, 0, 0, &rep));
	EXPECT_EQ(0, rep.ret);
	close(fd3);
	close_all(fds, nf);
}

/*
 * A batch that crosses the per-user limit: records are processed in order,
 * each ARM past the limit gets -ENOSPC without stopping the batch, and a
 * cancel in the same batch makes room for the next ARM.
 */
TEST_F(unpriv, batch_crosses_user_limit)
{
	uint64_t lim = self->api.out_max_timers_per_user;
	uint64_t per_fd = self->api.out_max_timers_per_fd;
	uint64_t per, first[MAX_FILES], h0, h;
	struct twheel_batch_op ops[8];
	int fds[MAX_FILES], nf, i;
	struct twheel_query q;
	uint32_t done;

	if (!limit_reachable(_metadata, "per-user", lim))
		return;
	ASSERT_LE(8, lim);
	ASSERT_LE(4, per_fd);
	/* lim - 3 timers: lim - 4 in other files, one (h0) in ours */
	per = per_fd < lim ? per_fd : lim;
	nf = spread(_metadata, lim - 4, per, fds, first);
	test_ioctl_arm(self->fd, 0, FAR, 0, 0, 100, &h0);

	op_set(&ops[0], TWHEEL_OP_ARM, 0, FAR, 200);
	op_set(&ops[1], TWHEEL_OP_ARM, 0, FAR, 201);
	op_set(&ops[2], TWHEEL_OP_ARM, 0, FAR, 202);	/* the last that fits */
	op_set(&ops[3], TWHEEL_OP_ARM, 0, FAR, 203);
	op_set(&ops[4], TWHEEL_OP_CANCEL, h0, 0, 0);
	op_set(&ops[5], TWHEEL_OP_ARM, 0, FAR, 205);	/* h0's room */
	op_set(&ops[6], TWHEEL_OP_ARM, 0, FAR, 206);
	op_set(&ops[7], TWHEEL_OP_CANCEL, h0, 0, 0);
	ASSERT_EQ(8, _test_ioctl_batch(self->fd, ops, 8, &done));
	EXPECT_EQ(8, done);
	EXPECT_EQ(0, ops[0].out_result);
	EXPECT_EQ(0, ops[1].out_result);
	EXPECT_EQ(0, ops[2].out_result);
	EXPECT_EQ(-ENOSPC, ops[3].out_result);
	EXPECT_EQ(RESULT_POISON, ops[4].out_result);	/* CANCEL worked */
	EXPECT_EQ(0, ops[5].out_result);
	EXPECT_EQ(-ENOSPC, ops[6].out_result);
	EXPECT_EQ(-ENOENT, ops[7].out_result);
	/* exactly the four records that succeeded left timers */
	EXPECT_EQ(4, fd_timers(self->fd));
	for (i = 0; i < 6; i++) {
		if (ops[i].op != TWHEEL_OP_ARM || ops[i].out_result)
			continue;
		test_ioctl_query(self->fd, ops[i].handle, &q);
		EXPECT_EQ(200 + i, q.out_cookie);
	}
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(self->fd, 0, FAR, 0, 0, 1, &h));
	close_all(fds, nf);
	/* the other files' timers are gone with them: room again */
	EXPECT_EQ(0, _test_ioctl_arm(self->fd, 0, FAR, 0, 0, 1, &h));
}

/*
 * The per-file limit, where it is below the per-user one: the file is full
 * while the user still has room in another file, also within a batch.
 */
TEST_F(unpriv, file_limit)
{
	uint64_t lim = self->api.out_max_timers_per_user;
	uint64_t per_fd = self->api.out_max_timers_per_fd;
	struct twheel_batch_op ops[3];
	uint64_t h, first, k;
	int fd2, err;

	if (!limit_reachable(_metadata, "per-file", per_fd))
		return;
	if (lim && per_fd >= lim)
		SKIP(return,
		     "the per-file limit (%llu) is not below the per-user one (the selftest plan reloads twheel with such limits)",
		     (unsigned long long)per_fd);
	ASSERT_LE(3, per_fd);
	ASSERT_EQ(per_fd - 1, arm_many(self->fd, per_fd - 1, 0, &err, &first));
	ASSERT_EQ(0, err);
	op_set(&ops[0], TWHEEL_OP_ARM, 0, FAR, 1);
	op_set(&ops[1], TWHEEL_OP_ARM, 0, FAR, 2);
	op_set(&ops[2], TWHEEL_OP_CANCEL, first, 0, 0);
	ASSERT_EQ(3, _test_ioctl_batch(self->fd, ops, 3, NULL));
	EXPECT_EQ(0, ops[0].out_result);
	EXPECT_EQ(-ENOSPC, ops[1].out_result);
	EXPECT_EQ(RESULT_POISON, ops[2].out_result);	/* CANCEL worked */
	EXPECT_EQ(per_fd - 1, fd_timers(self->fd));
	EXPECT_EQ(0, _test_ioctl_arm(self->fd, 0, FAR, 0, 0, 3, &h));
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(self->fd, 0, FAR, 0, 0, 4, &h));
	EXPECT_EQ(per_fd, fd_timers(self->fd));

	/* another file of the user still has the rest of the user's room */
	fd2 = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	k = lim && lim - per_fd < per_fd ? lim - per_fd : per_fd;
	EXPECT_EQ(k, arm_many(fd2, k, 0, &err, &first));
	EXPECT_EQ(0, err);
	close(fd2);
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(self->fd, 0, FAR, 0, 0, 5, &h));
}

/* ---- module parameters ---- */

/*
 * Every parameter of twheel is mode 0444 and cannot be opened for writing,
 * not even by root (kernfs refuses a write open of a file without write
 * bits); the values stay as they were.  Returns the number of parameters.
 */
static int params_read_only(struct __test_metadata *_metadata)
{
	char path[300], before[64], after[64];
	struct dirent *de;
	int n = 0, fd, err;
	ssize_t r;
	DIR *d;

	d = opendir(PARAM_DIR);
	ASSERT_NE(0, (uintptr_t)d) TH_LOG("%s: %s", PARAM_DIR, strerror(errno));
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", PARAM_DIR, de->d_name);
		ASSERT_EQ(0, stat(path, &st));
		EXPECT_EQ(0444, st.st_mode & 07777) TH_LOG("%s", path);
		fd = open(path, O_RDONLY);
		ASSERT_LE(0, fd);
		r = read(fd, before, sizeof(before) - 1);
		close(fd);
		ASSERT_LT(0, r);
		before[r] = 0;

		errno = 0;
		fd = open(path, O_WRONLY);
		err = errno;
		EXPECT_EQ(-1, fd) TH_LOG("%s opened for writing", path);
		EXPECT_TRUE(err == EACCES || err == EPERM)
			TH_LOG("%s: %s", path, strerror(err));
		if (fd >= 0) {
			EXPECT_GT(0, write(fd, "1\n", 2));
			close(fd);
		}
		fd = open(path, O_RDONLY);
		ASSERT_LE(0, fd);
		r = read(fd, after, sizeof(after) - 1);
		close(fd);
		ASSERT_LT(0, r);
		after[r] = 0;
		EXPECT_STREQ(before, after);
		n++;
	}
	closedir(d);
	return n;
}

static uint64_t param(struct __test_metadata *_metadata, const char *name)
{
	char path[300];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", PARAM_DIR, name);
	f = fopen(path, "re");
	EXPECT_NE(0, (uintptr_t)f) TH_LOG("%s: %s", path, strerror(errno));
	if (!f)
		return 0;
	EXPECT_EQ(1, fscanf(f, "%llu", &v));
	fclose(f);
	return v;
}

TEST_F(unpriv, module_params_read_only)
{
	uint64_t per_user = param(_metadata, "max_timers_per_user");
	uint64_t per_fd = param(_metadata, "max_timers_per_fd");

	/* tick_ns, wheel_bits, the two limits, budget */
	EXPECT_LE(5, params_read_only(_metadata));
	/* TWHEEL_IOC_API reports the limits in force: a 0 means a default */
	EXPECT_LT(0, self->api.out_max_timers_per_user);
	if (per_user)
		EXPECT_EQ(per_user, self->api.out_max_timers_per_user);
	EXPECT_EQ(per_fd ? per_fd : self->api.out_max_timers_per_user,
		  self->api.out_max_timers_per_fd);
}

TEST(module_params_read_only_for_root)
{
	if (geteuid() != 0)
		SKIP(return, "not run as root");
	EXPECT_LE(5, params_read_only(_metadata));
}

TEST_HARNESS_MAIN
