/*
 * test_fs.c: the cache on a network or parallel filesystem (cache/fs.h, cache/nodelock.h,
 * gt_db_open_host and gt_db_open_snapshot of cache/db.h, the per-host layers of
 * cache/layers.h, `gemmtune info`'s cache lines, merge and import there). No GPU needed.
 *
 * A filesystem type is injected with GEMMTUNE_CACHE_FS=<type> (the test aid of
 * base/env.h), a host name with gt_fs_set_test_host, so that child processes of this
 * test play the hosts of a cluster writing into one directory. Each case works under a
 * mkdtemp() root in /tmp, removed at the end (kept when TEST_FS_KEEP is set). Children
 * leave with _exit() and report through their exit status or a pipe, never through TAP.
 * TEST_FS_MOUNTS=A:B runs the case of eight writers on two hosts across two mounts of
 * one network filesystem (see two_hosts_write_one_directory).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "files.h"
#include "fixtures.h"
#include "fs.h"
#include "gemmtune.h"
#include "kernel_sources.h"
#include "key.h"
#include "layers.h"
#include "log.h"
#include "nodelock.h"
#include "tap.h"

/* ===================================================================================
 * Helpers
 * =================================================================================== */

static char root[256];

/* A fresh directory root/name into buf. */
static const char *case_dir(const char *name, char *buf, size_t size) {
    snprintf(buf, size, "%s/%s", root, name);
    mkdir(buf, 0755);
    return buf;
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Key i: a distinct shape per i. */
static void make_key(gt_key *k, int i) {
    memset(k, 0, sizeof *k);
    snprintf(k->device, sizeof k->device, "NVIDIA Test GPU 80GB");
    k->cc_major = 9;
    k->cc_minor = 0;
    k->sm_count = 132;
    k->dtype = GT_DT_F32;
    k->opb = 1;
    k->m = 64 + i;
    k->n = 128;
    k->k = 256;
    k->align = 16;
}

#define SRC "test-source-hash"

/* The winner every writer stores for key i: its configuration names i, so that a reader
 * can tell a row that is not what was written. */
static void make_winner(gt_db_winner *w, int i, const char *host) {
    memset(w, 0, sizeof *w);
    snprintf(w->config, sizeof w->config, "cfg-%d", i);
    w->time_us = 10.0 + i;
    w->tflops = 1.0 + i;
    w->tuned_at = 1700000000 + i;
    snprintf(w->nvrtc, sizeof w->nvrtc, "13.0");
    snprintf(w->driver, sizeof w->driver, "13000");
    snprintf(w->host, sizeof w->host, "%s", host);
    snprintf(w->libver, sizeof w->libver, "0.1.0");
}

static int winner_is(const gt_db_winner *w, int i) {
    char want[32];
    snprintf(want, sizeof want, "cfg-%d", i);
    return strcmp(w->config, want) == 0 && w->time_us == 10.0 + i && w->tflops == 1.0 + i &&
           w->tuned_at == 1700000000 + i;
}

static gt_status store_key(gt_db *db, int i, const char *host) {
    gt_key k;
    gt_db_winner w;
    gt_db_timing t;
    make_key(&k, i);
    make_winner(&w, i, host);
    memset(&t, 0, sizeof t);
    snprintf(t.config, sizeof t.config, "cfg-%d", i);
    snprintf(t.status, sizeof t.status, "ok");
    t.time_us = w.time_us;
    return gt_db_store(db, &k, SRC, GT_VERSION_MAJOR, &w, &t, 1);
}

/* 1 when db holds key i with the winner written for it. */
static int holds(gt_db *db, int i) {
    gt_key k;
    gt_db_winner w;
    int found = 0;
    make_key(&k, i);
    return gt_db_lookup(db, &k, SRC, GT_VERSION_MAJOR, &w, &found) == GT_SUCCESS && found &&
           winner_is(&w, i);
}

typedef struct rows {
    int n, bad;
    int seen[4096];
} rows;

/* Counts the winners of a file and those that are not what was written for their key. */
static int count_row(const gt_key *key, const char *src, int major, const gt_db_winner *w,
                     void *user) {
    (void)src, (void)major;
    rows *r = user;
    int i = (int)key->m - 64;
    if (i < 0 || i >= 4096 || !winner_is(w, i) || r->seen[i]) r->bad++;
    else r->seen[i] = 1;
    r->n++;
    return 0;
}

static int count_rows(gt_db *db, rows *r) {
    memset(r, 0, sizeof *r);
    return gt_db_list(db, count_row, r) == GT_SUCCESS ? r->n : -1;
}


/* The SQLite header's write and read versions (1: rollback journal, 2: WAL); -1 when the
 * file is not an SQLite file. */
static int journal_kind(const char *path) {
    size_t n = 0;
    unsigned char *b = read_all(path, &n);
    int v = b && n >= 100 && memcmp(b, "SQLite format 3", 16) == 0 && b[18] == b[19] ? b[18] : -1;
    free(b);
    return v;
}

/* No -wal, -shm or -journal file beside path. */
static int no_side_files(const char *path) {
    static const char *const sfx[] = {"-wal", "-shm", "-journal"};
    for (int i = 0; i < 3; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s%s", path, sfx[i]);
        if (exists(p)) return 0;
    }
    return 1;
}

/* Warnings captured from the library. */
static char warnings[8192];
static int nwarnings;

static void capture(int level, const char *message, void *user) {
    (void)user;
    if (level != GT_LOG_WARN) return;
    nwarnings++;
    size_t len = strlen(warnings);
    snprintf(warnings + len, sizeof warnings - len, "%s\n", message);
}

static void capture_begin(void) {
    warnings[0] = 0;
    nwarnings = 0;
    gt_set_log_callback(capture, NULL);
    gt_set_log_level(GT_LOG_WARN);
}

static void capture_end(void) {
    gt_set_log_level(GT_LOG_OFF);
    gt_set_log_callback(NULL, NULL);
}

static gt_db *open_host(const char *path) {
    gt_db *db = NULL;
    char msg[600];
    gt_status s = gt_db_open_host(path, 0, &db, msg, sizeof msg);
    TAP_CHECK(s == GT_SUCCESS && db, "open_host %s: %s", path, msg);
    return s == GT_SUCCESS ? db : NULL;
}

/* ===================================================================================
 * Filesystem types and policy
 * =================================================================================== */

typedef struct {
    const char *name;
    unsigned long magic;
    int shared;
} type_row;

#define TYPE_ROW(name, magic, shared) {name, magic, shared},
static const type_row table[] = {GT_FS_TABLE(TYPE_ROW)};
#undef TYPE_ROW
#define NTABLE (int)(sizeof table / sizeof table[0])

/* Every type of the table is named and classed from its magic number; the issue's
 * families are shared, the usual local filesystems are not, and an unknown number is
 * neither. */
static void fs_type_table(void) {
    for (int i = 0; i < NTABLE; i++) {
        int shared = -1;
        const char *name = gt_fs_type_name(table[i].magic, &shared);
        TAP_CHECK(name && strcmp(name, table[i].name) == 0, "0x%lx: %s, want %s", table[i].magic,
                  name ? name : "(null)", table[i].name);
        TAP_CHECK(shared == table[i].shared, "%s: shared %d", table[i].name, shared);
        for (int j = 0; j < i; j++)
            TAP_CHECK(table[j].magic != table[i].magic, "%s and %s share a magic number",
                      table[i].name, table[j].name);
    }
    static const struct {
        unsigned long magic;
        const char *name;
        int shared;
    } known[] = {{0x6969, "nfs", 1},          {0x0BD00BD0, "lustre", 1}, {0x47504653, "gpfs", 1},
                 {0x19830326, "beegfs", 1},   {0x00C36400, "cephfs", 1}, {0x517B, "smb", 1},
                 {0xFF534D42, "cifs", 1},     {0xFE534D42, "smb2", 1},   {0x65735546, "fuse", 1},
                 {0xEF53, "ext4", 0},         {0x58465342, "xfs", 0},    {0x01021994, "tmpfs", 0},
                 {0x794C7630, "overlayfs", 0}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        int shared = -1;
        const char *name = gt_fs_type_name(known[i].magic, &shared);
        TAP_CHECK(name && strcmp(name, known[i].name) == 0 && shared == known[i].shared,
                  "0x%lx: %s shared %d", known[i].magic, name ? name : "(null)", shared);
    }
    int shared = -1;
    TAP_CHECK(gt_fs_type_name(0x12345678UL, &shared) == NULL && shared == 0, "unknown type");
    /* statfs's f_type is signed on some ABIs: CIFS's 0xFF534D42 may arrive sign-extended. */
    unsigned long ext = (unsigned long)(long)(int)0xFF534D42U;
    const char *name = gt_fs_type_name(ext, &shared);
    TAP_CHECK(name && strcmp(name, "cifs") == 0 && shared == 1, "sign-extended CIFS: %s",
              name ? name : "(null)");
}

/* gt_fs_probe: an injected type of each family, the real type of a directory (also one
 * not made yet), forcing either way, and a bad value warned about once. */
static void fs_probe(void) {
    char dir[512], path[600];
    case_dir("probe", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/cache.db", dir);
    const char *var = "GEMMTUNE_CACHE_FS";
    for (int i = 0; i < NTABLE; i++) {
        setenv(var, table[i].name, 1);
        gt_fs_info fs;
        gt_fs_probe(path, &fs);
        char source[64];
        snprintf(source, sizeof source, "%s=%s", var, table[i].name);
        TAP_CHECK(strcmp(fs.type, table[i].name) == 0 && fs.magic == table[i].magic &&
                      fs.shared == table[i].shared && fs.per_host == table[i].shared &&
                      strcmp(fs.source, source) == 0,
                  "injected %s: type %s shared %d per_host %d source %s", table[i].name, fs.type,
                  fs.shared, fs.per_host, fs.source);
    }
    setenv(var, "NFS", 1);
    gt_fs_info fs;
    gt_fs_probe(path, &fs);
    TAP_CHECK(strcmp(fs.type, "nfs") == 0 && fs.per_host, "NFS in capitals: %s", fs.type);

    /* The real filesystem, as statfs says. */
    unsetenv(var);
    struct statfs st;
    TAP_CHECK(statfs(dir, &st) == 0, "statfs %s: %s", dir, strerror(errno));
    int shared = 0;
    const char *name = gt_fs_type_name((unsigned long)st.f_type, &shared);
    char want[32];
    if (name) snprintf(want, sizeof want, "%s", name);
    else snprintf(want, sizeof want, "0x%lx", (unsigned long)st.f_type & 0xFFFFFFFFUL);
    gt_fs_probe(path, &fs);
    TAP_CHECK(strcmp(fs.type, want) == 0 && fs.per_host == shared &&
                  strcmp(fs.source, "detected") == 0,
              "real: %s per_host %d (%s), want %s", fs.type, fs.per_host, fs.source, want);
    printf("# %s is on %s\n", dir, fs.type);
    gt_fs_info deep;
    char deep_path[700];
    snprintf(deep_path, sizeof deep_path, "%s/not/made/yet/cache.db", dir);
    gt_fs_probe(deep_path, &deep);
    TAP_CHECK(strcmp(deep.type, fs.type) == 0 && deep.magic == fs.magic,
              "a directory not made yet: %s, want %s", deep.type, fs.type);
    if (statfs("/dev/shm", &st) == 0 && (st.f_type & 0xFFFFFFFFL) == 0x01021994L) {
        gt_fs_probe("/dev/shm/cache.db", &fs);
        TAP_CHECK(strcmp(fs.type, "tmpfs") == 0 && !fs.per_host, "/dev/shm: %s", fs.type);
    }
    gt_fs_probe("/proc/cache.db", &fs); /* proc: a type outside the table */
    TAP_CHECK(fs.type[0] == '0' && fs.type[1] == 'x' && !fs.shared && !fs.per_host,
              "/proc: %s per_host %d", fs.type, fs.per_host);

    /* Forced either way; the type stays the real one. */
    setenv(var, "shared", 1);
    gt_fs_probe(path, &fs);
    TAP_CHECK(fs.per_host == 1 && strcmp(fs.type, want) == 0 &&
                  strcmp(fs.source, "GEMMTUNE_CACHE_FS=shared") == 0,
              "shared: per_host %d type %s source %s", fs.per_host, fs.type, fs.source);
    setenv(var, "local", 1);
    gt_fs_probe("/proc/x", &fs);
    TAP_CHECK(fs.per_host == 0 && strcmp(fs.source, "GEMMTUNE_CACHE_FS=local") == 0, "local");
    setenv(var, "auto", 1);
    gt_fs_probe(path, &fs);
    TAP_CHECK(fs.per_host == shared && strcmp(fs.source, "detected") == 0, "auto");

    capture_begin();
    setenv(var, "bogus", 1);
    gt_fs_probe(path, &fs);
    gt_fs_probe(path, &fs);
    capture_end();
    TAP_CHECK(fs.per_host == shared && strcmp(fs.source, "detected") == 0, "bogus is auto");
    TAP_CHECK(nwarnings == 1 && strstr(warnings, "bogus"), "bogus: %d warnings: %s", nwarnings,
              warnings);
    unsetenv(var);
}

/* Host names as file names, and the per-host file beside a named one. */
static void fs_host_names(void) {
    char buf[256];
    gt_fs_set_test_host("node 17/x:y");
    TAP_CHECK(gt_fs_host(buf, sizeof buf) == 0 && strcmp(buf, "node_17_x_y") == 0, "%s", buf);
    gt_fs_set_test_host("n1.cluster.example.org");
    TAP_CHECK(gt_fs_host(buf, sizeof buf) == 0 && strcmp(buf, "n1.cluster.example.org") == 0,
              "%s", buf);
    char small[4];
    TAP_CHECK(gt_fs_host(small, sizeof small) == 0 && strcmp(small, "n1.") == 0, "truncated: %s",
              small);
    gt_fs_set_test_host(NULL);
    char real[256] = "", want[64] = "";
    TAP_CHECK(gethostname(real, sizeof real) == 0, "gethostname");
    for (size_t i = 0; real[i] && i < 63; i++) {
        unsigned char c = (unsigned char)real[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        want[i] = ok ? (char)c : '_';
    }
    TAP_CHECK(gt_fs_host(buf, sizeof buf) == 0 && strcmp(buf, want) == 0, "real: %s, want %s",
              buf, want);

    static const struct {
        const char *nominal, *want;
    } names[] = {
        {"/h/.cache/gemmtune/cache.db", "/h/.cache/gemmtune/cache.n1.db"},
        {"/scratch/tune.3.db", "/scratch/tune.3.n1.db"},
        {"/a.b/cache", "/a.b/cache.n1"},
        {"/a/.hidden", "/a/.hidden.n1"},
        {"cache.db", "cache.n1.db"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        TAP_CHECK(gt_fs_host_path(names[i].nominal, "n1", buf, sizeof buf) == 0 &&
                      strcmp(buf, names[i].want) == 0,
                  "%s -> %s, want %s", names[i].nominal, buf, names[i].want);
    char tight[12];
    TAP_CHECK(gt_fs_host_path("/x/cache.db", "n1", tight, sizeof tight) == -1 && tight[0] == 0,
              "does not fit: %s", tight);
    TAP_CHECK(gt_fs_host_path("/x/cache.db", "", buf, sizeof buf) == -1, "empty host");
}

typedef struct listing {
    char names[16][64];
    int n;
} listing;

static int list_one(const char *path, time_t mtime, void *user) {
    (void)mtime;
    listing *l = user;
    const char *slash = strrchr(path, '/');
    if (l->n < 16) snprintf(l->names[l->n++], sizeof l->names[0], "%s", slash ? slash + 1 : path);
    return 0;
}

static void touch_at(const char *path, time_t t) {
    FILE *f = fopen(path, "ab");
    if (f) fclose(f);
    struct timeval tv[2] = {{t, 0}, {t, 0}};
    utimes(path, tv);
}

/* The other hosts' files of a directory: `<stem>.<host><ext>` and the named file, newest
 * first; not this host's, not journals, temporary files, other stems or directories. */
static void fs_other_hosts(void) {
    char dir[512], p[700];
    case_dir("others", dir, sizeof dir);
    static const struct {
        const char *name;
        time_t t;
    } files[] = {{"cache.db", 1000},         {"cache.a.db", 3000},
                 {"cache.b.c.db", 4000},     {"cache.me.db", 5000},
                 {"cache.db-journal", 6000}, {"cache.a.db-journal", 6000},
                 {"cache.a.db.tmp.77", 6000}, {"other.db", 6000},
                 {"cache..db", 6000},        {"cache.x y.db", 6000},
                 {"cache.z.db", 2000}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i].name);
        touch_at(p, files[i].t);
    }
    snprintf(p, sizeof p, "%s/cache.sub.db", dir);
    mkdir(p, 0755);
    char nominal[600];
    snprintf(nominal, sizeof nominal, "%s/cache.db", dir);
    listing l = {.n = 0};
    int n = gt_fs_other_hosts(nominal, "me", list_one, &l);
    static const char *const want[] = {"cache.b.c.db", "cache.a.db", "cache.z.db", "cache.db"};
    TAP_CHECK(n == 4 && l.n == 4, "%d files, %d listed", n, l.n);
    for (int i = 0; i < 4 && i < l.n; i++)
        TAP_CHECK(strcmp(l.names[i], want[i]) == 0, "file %d: %s, want %s", i, l.names[i], want[i]);
    snprintf(nominal, sizeof nominal, "%s/missing/cache.db", dir);
    TAP_CHECK(gt_fs_other_hosts(nominal, "me", list_one, &l) == 0, "missing directory");
}

/* ===================================================================================
 * The host-wide lock
 * =================================================================================== */

/* One name per file, whatever path reaches it; mutual exclusion between processes and
 * between two holders in one process; a holder that dies releases it; a child forked
 * while it is held does not keep it. */
static void nodelock_exclusion(void) {
    char dir[512], link[600], a[700], b[700], c[700];
    case_dir("lock", dir, sizeof dir);
    snprintf(link, sizeof link, "%s/via-link", root);
    TAP_CHECK(symlink(dir, link) == 0, "symlink: %s", strerror(errno));
    snprintf(a, sizeof a, "%s/cache.n1.db", dir);
    snprintf(b, sizeof b, "%s/cache.n1.db", link);
    snprintf(c, sizeof c, "%s/cache.n2.db", dir);
    char na[64], nb[64], nc[64];
    TAP_CHECK(gt_nodelock_name(a, na, sizeof na) == 0 && gt_nodelock_name(b, nb, sizeof nb) == 0 &&
                  gt_nodelock_name(c, nc, sizeof nc) == 0,
              "names");
    TAP_CHECK(strcmp(na, nb) == 0, "one file by two paths: %s vs %s", na, nb);
    TAP_CHECK(strcmp(na, nc) != 0, "two files, one name %s", na);
    TAP_CHECK(gt_nodelock_name("/no/such/dir/x.db", nc, sizeof nc) == ENOENT, "missing dir");

    int fd1 = -1, fd2 = -1;
    TAP_CHECK(gt_nodelock_acquire(na, 100, &fd1) == 0 && fd1 >= 0, "first");
    double t0 = now_s();
    TAP_CHECK(gt_nodelock_acquire(na, 50, &fd2) == ETIMEDOUT && fd2 == -1, "second holder");
    double waited = now_s() - t0;
    TAP_CHECK(waited >= 0.045 && waited < 1.0, "waited %.3f s for a 50 ms timeout", waited);
    gt_nodelock_release(fd1);
    TAP_CHECK(gt_nodelock_acquire(na, 50, &fd2) == 0, "after release");
    gt_nodelock_release(fd2);

    /* A child takes it and dies holding it. */
    int pfd[2];
    TAP_CHECK(pipe(pfd) == 0, "pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd;
        char ok = gt_nodelock_acquire(na, 1000, &fd) == 0 ? 'y' : 'n';
        if (write(pfd[1], &ok, 1) != 1) _exit(1);
        pause();
        _exit(0);
    }
    char ok = 0;
    TAP_CHECK(read(pfd[0], &ok, 1) == 1 && ok == 'y', "child took the lock");
    TAP_CHECK(gt_nodelock_acquire(na, 50, &fd1) == ETIMEDOUT, "held by the child");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    TAP_CHECK(gt_nodelock_acquire(na, 1000, &fd1) == 0, "released when its holder died");

    /* A child forked while the lock is held (a worker that lives on without exec) does
     * not keep it: once this process releases it, a third process can take it. */
    fflush(stdout);
    pid_t worker = fork();
    if (worker == 0) {
        gt_nodelock_release(fd1); /* not the child's: must not close whatever fd1 is now */
        pause();
        _exit(0);
    }
    gt_nodelock_release(fd1);
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        int fd;
        _exit(gt_nodelock_acquire(na, 500, &fd) == 0 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    TAP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "a child forked while the lock was held still holds it (status 0x%x)", status);
    kill(worker, SIGKILL);
    waitpid(worker, NULL, 0);
    close(pfd[0]), close(pfd[1]);
}

/* ===================================================================================
 * Host files
 * =================================================================================== */

/* A host file has a rollback journal, never WAL, leaves no side files, records its
 * winners' digest, and ignores the filesystem's locks: a POSIX lock that blocks an
 * ordinary SQLite reader does not stop it. */
static void host_file_no_wal_no_fs_locks(void) {
    char dir[512], path[600];
    case_dir("host", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/cache.n1.db", dir);
    gt_db *db = open_host(path);
    if (!db) return;
    for (int i = 0; i < 3; i++)
        TAP_CHECK(store_key(db, i, "n1") == GT_SUCCESS, "store %d: %s", i, gt_db_errmsg(db));
    TAP_CHECK(journal_kind(path) == 1, "journal kind %d, want 1 (rollback)", journal_kind(path));
    TAP_CHECK(no_side_files(path), "a -wal, -shm or -journal file is left");
    char digest[64];
    raw_text(path, 1, "SELECT value FROM meta WHERE key = 'winners_digest'", digest, sizeof digest);
    TAP_CHECK(strncmp(digest, "3 ", 2) == 0, "digest '%s'", digest);

    /* Another process write-locks the whole file with fcntl. */
    int pfd[2];
    TAP_CHECK(pipe(pfd) == 0, "pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_RDWR);
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
        char ok = fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0 ? 'y' : 'n';
        if (write(pfd[1], &ok, 1) != 1) _exit(1);
        pause();
        _exit(0);
    }
    char ok = 0;
    TAP_CHECK(read(pfd[0], &ok, 1) == 1 && ok == 'y', "child's fcntl lock");
    gt_db *plain = NULL;
    char msg[600];
    gt_status s = gt_db_open(path, 1, 200, &plain, msg, sizeof msg);
    TAP_CHECK(s == GT_CACHE_ERROR && strstr(msg, "locked"),
              "an ordinary reader under the lock: status %d: %s", s, msg);
    if (s == GT_SUCCESS) gt_db_close(plain);
    double t0 = now_s();
    TAP_CHECK(store_key(db, 3, "n1") == GT_SUCCESS, "host store under the lock: %s",
              gt_db_errmsg(db));
    TAP_CHECK(holds(db, 3) && holds(db, 0), "host lookups under the lock");
    gt_db *again = open_host(path);
    TAP_CHECK(again && holds(again, 3), "a second host handle under the lock");
    gt_db_close(again);
    printf("# host file writes under another process's fcntl lock: %.3f s\n", now_s() - t0);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(pfd[0]), close(pfd[1]);

    /* Two handles of one file in one process: each sees the other's writes. */
    gt_db *other = open_host(path);
    TAP_CHECK(other && store_key(other, 4, "n1") == GT_SUCCESS, "second handle stores");
    TAP_CHECK(holds(db, 4), "the first handle sees the second's write");
    gt_db_close(other);
    gt_db_close(db);
    TAP_CHECK(no_side_files(path), "side files after close");
}

/* A WAL file is refused as a host file and left as it was. */
static void host_file_refuses_wal(void) {
    char dir[512], path[600], msg[600];
    case_dir("walhost", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/cache.n1.db", dir);
    gt_db *db = NULL;
    TAP_CHECK(gt_db_open(path, 0, 0, &db, msg, sizeof msg) == GT_SUCCESS, "%s", msg);
    if (db) {
        store_key(db, 0, "n1");
        gt_db_close(db);
    }
    TAP_CHECK(journal_kind(path) == 2, "the fixture is WAL: %d", journal_kind(path));
    size_t n = 0;
    unsigned char *before = read_all(path, &n);
    gt_status s = gt_db_open_host(path, 0, &db, msg, sizeof msg);
    TAP_CHECK(s == GT_CACHE_ERROR && !db && strstr(msg, "WAL mode") && strstr(msg, path),
              "status %d: %s", s, msg);
    TAP_CHECK(before && same_bytes(path, before, n), "the WAL file was changed");
    free(before);
}

/* Stores key i with ntimings candidate rows: a longer transaction. */
static gt_status store_key_long(gt_db *db, int i, int ntimings) {
    gt_key k;
    gt_db_winner w;
    make_key(&k, i);
    make_winner(&w, i, "n1");
    gt_db_timing *t = calloc((size_t)ntimings, sizeof *t);
    if (!t) return GT_OUT_OF_MEMORY;
    for (int j = 0; j < ntimings; j++) {
        snprintf(t[j].config, sizeof t[j].config, "cfg-%d-%d", i, j);
        snprintf(t[j].status, sizeof t[j].status, "ok");
        snprintf(t[j].message, sizeof t[j].message, "%0200d", j);
        t[j].time_us = j;
    }
    gt_status s = gt_db_store(db, &k, SRC, GT_VERSION_MAJOR, &w, t, ntimings);
    free(t);
    return s;
}

/* 1 when the rollback journal at path is hot: it holds a transaction that was not
 * committed (SQLite's journal magic at the start; a journal left empty or with a zeroed
 * header holds nothing to roll back). */
static int journal_hot(const char *path) {
    static const unsigned char magic[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};
    size_t n = 0;
    unsigned char *b = read_all(path, &n);
    int hot = b && n >= 8 && memcmp(b, magic, 8) == 0;
    free(b);
    return hot;
}

/* A host file survives its writer's death mid-transaction: the next open rolls a hot
 * journal back, every commit the writer reported is there, and snapshots read it. Five
 * writers are killed at random points; how many left a hot journal is reported. */
static void host_file_writer_killed(void) {
    char dir[512], path[600], journal[700];
    case_dir("killed", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/cache.n1.db", dir);
    snprintf(journal, sizeof journal, "%s-journal", path);
    int hot = 0, first = 0;
    for (int trial = 0; trial < 5; trial++) {
        int pfd[2];
        TAP_CHECK(pipe(pfd) == 0, "pipe");
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            close(pfd[0]);
            gt_db *db = NULL;
            char msg[600];
            if (gt_db_open_host(path, 0, &db, msg, sizeof msg) != GT_SUCCESS) _exit(2);
            for (int i = first; i < first + 4000; i++) {
                if (store_key_long(db, i, 100) != GT_SUCCESS) _exit(3);
                if (write(pfd[1], &i, sizeof i) != sizeof i) _exit(4);
            }
            _exit(0);
        }
        close(pfd[1]);
        int last = first - 1, i;
        unsigned seed = (unsigned)(now_s() * 1e6);
        int stop = first + 5 + (int)(rand_r(&seed) % 20);
        while (last < stop && read(pfd[0], &i, sizeof i) == sizeof i) last = i;
        sleep_ms((int)(rand_r(&seed) % 3));
        kill(pid, SIGKILL);
        while (read(pfd[0], &i, sizeof i) == sizeof i) last = i;
        int status = 0;
        waitpid(pid, &status, 0);
        close(pfd[0]);
        TAP_CHECK(WIFSIGNALED(status), "the writer was not killed (status 0x%x)", status);
        hot += journal_hot(journal);
        gt_db *db = open_host(path);
        rows r;
        int n = db ? count_rows(db, &r) : -1;
        TAP_CHECK(n >= last + 1 && r.bad == 0, "%d rows (%d bad) after %d reported commits", n,
                  r.bad, last + 1);
        for (int k = 0; db && k <= last; k++) TAP_CHECK(holds(db, k), "commit %d lost", k);
        gt_db_close(db);
        TAP_CHECK(!journal_hot(journal), "the hot journal was not rolled back");
        char ok[32];
        raw_text(path, 1, "PRAGMA integrity_check", ok, sizeof ok);
        TAP_CHECK(strcmp(ok, "ok") == 0, "integrity_check: %s", ok);
        gt_db *snap = NULL;
        char msg[600];
        TAP_CHECK(gt_db_open_snapshot(path, 0, &snap, msg, sizeof msg) == GT_SUCCESS, "%s", msg);
        TAP_CHECK(snap && count_rows(snap, &r) == n && r.bad == 0, "snapshot rows");
        gt_db_close(snap);
        first = n;
    }
    printf("# 5 writers killed; %d died inside a transaction (a hot journal left); %d rows "
           "kept\n",
           hot, first);
}

/* ===================================================================================
 * Snapshots
 * =================================================================================== */

static gt_db *snapshot(const char *path, int timings) {
    gt_db *db = NULL;
    char msg[600];
    gt_status s = gt_db_open_snapshot(path, timings, &db, msg, sizeof msg);
    TAP_CHECK(s == GT_SUCCESS && db, "snapshot %s: %s", path, msg);
    return s == GT_SUCCESS ? db : NULL;
}

static int count_timing(const gt_db_timing *t, void *user) {
    (void)t;
    ++*(int *)user;
    return 0;
}

/* A snapshot copies the winners (and the timings when asked, never the cubins), leaves
 * the file untouched, does not follow later writes, and refuses writes; WAL files,
 * empty files, garbage and missing files each get their answer. */
static void snapshot_basics(void) {
    char dir[512], path[600], msg[600];
    case_dir("snap", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/cache.n1.db", dir);
    gt_db *db = open_host(path);
    if (!db) return;
    for (int i = 0; i < 20; i++) store_key(db, i, "n1");
    gt_db_bin_key bk = {SRC, "f32|NN|64x64x64|a16|b1|cfg", 90, "13.0", "13000"};
    static const unsigned char image[64] = {0x7f, 'E', 'L', 'F'};
    TAP_CHECK(gt_db_cubin_put(db, &bk, image, sizeof image) == GT_SUCCESS, "cubin");
    size_t n = 0;
    unsigned char *before = read_all(path, &n);
    gt_db *snap = snapshot(path, 0), *snapt = snapshot(path, 1);
    TAP_CHECK(before && same_bytes(path, before, n) && no_side_files(path),
              "a snapshot changed the file or left side files");
    free(before);
    rows r;
    TAP_CHECK(snap && count_rows(snap, &r) == 20 && r.bad == 0, "snapshot rows");
    int all = 1;
    for (int i = 0; snap && i < 20; i++) all &= holds(snap, i);
    TAP_CHECK(all, "a row is missing or wrong in the snapshot");
    gt_key k;
    make_key(&k, 3);
    int nt = 0, ntt = 0;
    if (snap) gt_db_timings(snap, &k, SRC, GT_VERSION_MAJOR, count_timing, &nt);
    if (snapt) gt_db_timings(snapt, &k, SRC, GT_VERSION_MAJOR, count_timing, &ntt);
    TAP_CHECK(nt == 0 && ntt == 1, "timings: %d without, %d with", nt, ntt);
    TAP_CHECK(snapt && gt_db_cubin_count(snapt) == 0, "a snapshot carries no cubins");
    TAP_CHECK(snap && store_key(snap, 99, "x") == GT_CACHE_ERROR, "a snapshot took a write");
    store_key(db, 20, "n1");
    TAP_CHECK(snap && !holds(snap, 20), "a snapshot followed a later write");
    gt_db_close(snap), gt_db_close(snapt), gt_db_close(db);

    /* A WAL file written by the local policy (complete, closed). */
    char wal[600];
    snprintf(wal, sizeof wal, "%s/cache.db", dir);
    TAP_CHECK(gt_db_open(wal, 0, 0, &db, msg, sizeof msg) == GT_SUCCESS, "%s", msg);
    if (db) {
        for (int i = 0; i < 5; i++) store_key(db, i, "local");
        gt_db_close(db);
    }
    snap = snapshot(wal, 0);
    TAP_CHECK(snap && count_rows(snap, &r) == 5 && r.bad == 0, "WAL file snapshot");
    gt_db_close(snap);

    /* Empty, garbage, missing. */
    char p[600];
    snprintf(p, sizeof p, "%s/empty.db", dir);
    touch_at(p, 1000);
    snap = snapshot(p, 0);
    TAP_CHECK(snap && count_rows(snap, &r) == 0, "empty file");
    gt_db_close(snap);
    snprintf(p, sizeof p, "%s/garbage.db", dir);
    char junk[4096];
    memset(junk, 'x', sizeof junk);
    FILE *f = fopen(p, "wb");
    if (f) fwrite(junk, 1, sizeof junk, f), fclose(f);
    double t0 = now_s();
    gt_status s = gt_db_open_snapshot(p, 0, &snap, msg, sizeof msg);
    double took = now_s() - t0;
    TAP_CHECK(s == GT_CACHE_ERROR && !snap && strstr(msg, "not an SQLite database"),
              "garbage: %d %s", s, msg);
    TAP_CHECK(took < 0.05, "garbage was retried: %.3f s", took);
    snprintf(p, sizeof p, "%s/missing.db", dir);
    s = gt_db_open_snapshot(p, 0, &snap, msg, sizeof msg);
    TAP_CHECK(s == GT_CACHE_ERROR && !snap && strstr(msg, p), "missing: %d %s", s, msg);
}

static int raw_int(const char *path, const char *sql) {
    char buf[64];
    raw_text(path, 1, sql, buf, sizeof buf);
    return buf[0] ? atoi(buf) : -1;
}

static int write_bytes(const char *path, const unsigned char *b, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(b, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* What a reader sees when it reads pages of two states of a host file: the winners of
 * the later state with the meta pages (and so the digest) of the earlier one. Every page
 * is sound, so SQLite reads the file without complaint (integrity_check "ok"), and the
 * header is the later state's, so only the digest can tell; the snapshot is refused.
 * Both pure states are accepted. */
static void snapshot_rejects_torn(void) {
    char dir[512], path[600], p1[600], p2[600], mix[600], msg[600];
    case_dir("torn", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/cache.n1.db", dir);
    gt_db *db = open_host(path);
    if (!db) return;
    for (int i = 0; i < 5; i++) store_key(db, i, "n1");
    size_t n1 = 0, n2 = 0;
    unsigned char *s1 = read_all(path, &n1);
    for (int i = 5; i < 10; i++) store_key(db, i, "n1");
    unsigned char *s2 = read_all(path, &n2);
    gt_db_close(db);
    /* The meta table and its primary key's index: one page each. */
    int page = raw_int(path, "PRAGMA page_size");
    int meta[2] = {raw_int(path, "SELECT rootpage FROM sqlite_master WHERE name = 'meta'"),
                   raw_int(path, "SELECT rootpage FROM sqlite_master WHERE tbl_name = 'meta' "
                                 "AND type = 'index'")};
    TAP_CHECK(s1 && s2 && page > 0 && meta[0] > 1 && meta[1] > 1,
              "page size %d, meta at pages %d and %d", page, meta[0], meta[1]);
    if (!s1 || !s2 || page <= 0 || meta[0] <= 1 || meta[1] <= 1 ||
        (size_t)meta[0] * (size_t)page > n1 || (size_t)meta[1] * (size_t)page > n1) {
        free(s1), free(s2);
        return;
    }
    size_t off = (size_t)(meta[0] - 1) * (size_t)page;
    TAP_CHECK(memcmp(s1 + off, s2 + off, (size_t)page) != 0, "the meta page did not change");
    snprintf(p1, sizeof p1, "%s/state1.db", dir);
    snprintf(p2, sizeof p2, "%s/state2.db", dir);
    snprintf(mix, sizeof mix, "%s/mixed.db", dir);
    TAP_CHECK(write_bytes(p1, s1, n1) == 0 && write_bytes(p2, s2, n2) == 0, "write states");
    for (int i = 0; i < 2; i++) {
        off = (size_t)(meta[i] - 1) * (size_t)page;
        memcpy(s2 + off, s1 + off, (size_t)page);
    }
    TAP_CHECK(write_bytes(mix, s2, n2) == 0, "write the mix");
    free(s1), free(s2);
    rows r;
    gt_db *snap = snapshot(p1, 0);
    TAP_CHECK(snap && count_rows(snap, &r) == 5, "state 1");
    gt_db_close(snap);
    snap = snapshot(p2, 0);
    TAP_CHECK(snap && count_rows(snap, &r) == 10, "state 2");
    gt_db_close(snap);
    char count[32], check[64];
    raw_text(mix, 1, "SELECT count(*) FROM winners", count, sizeof count);
    raw_text(mix, 1, "PRAGMA integrity_check", check, sizeof check);
    TAP_CHECK(strcmp(count, "10") == 0 && strcmp(check, "ok") == 0,
              "SQLite does not read the mix without complaint: %s rows, %s", count, check);
    snap = NULL;
    gt_status s = gt_db_open_snapshot(mix, 0, &snap, msg, sizeof msg);
    TAP_CHECK(s == GT_CACHE_ERROR && !snap && strstr(msg, "digest"), "the mix: %d %s", s, msg);
    gt_db_close(snap);
}

/* ===================================================================================
 * Hosts writing one directory at once
 * =================================================================================== */

#define HOSTS 2
#define PER_HOST 4
#define KEYS_EACH 25
#define WRITERS (HOSTS * PER_HOST)

static const char *const host_names[HOSTS] = {"hostA", "hostB"};

/* Writer w's keys: w * KEYS_EACH .. + KEYS_EACH - 1 (host w / PER_HOST). */
static int writer_of(int key) { return key / KEYS_EACH; }

/* A child playing host h: writes its keys through the layers (as gemm_tuned does), then
 * snapshots the other host's file, which may still be being written. Exit 0, or a code
 * that names what went wrong. Snapshot outcomes go to the pipe: 'k' a consistent
 * snapshot, 'x' an inconsistent one (a row not as written), 'f' a refused one. */
static void writer_child(int w, const char *dir, int out) {
    int h = w / PER_HOST;
    char nominal[600];
    snprintf(nominal, sizeof nominal, "%s/cache.db", dir);
    setenv("GEMMTUNE_CACHE", nominal, 1);
    gt_fs_set_test_host(host_names[h]);
    gt_layers_open();
    char want[600];
    snprintf(want, sizeof want, "%s/cache.%s.db", dir, host_names[h]);
    int open = 0;
    if (strcmp(gt_layers_user_path(&open), want) != 0 || !open) _exit(10);
    for (int i = w * KEYS_EACH; i < (w + 1) * KEYS_EACH; i++) {
        gt_key k;
        gt_db_winner win;
        make_key(&k, i);
        make_winner(&win, i, host_names[h]);
        gt_db_timing t[20];
        memset(t, 0, sizeof t);
        for (int j = 0; j < 20; j++) {
            snprintf(t[j].config, sizeof t[j].config, "cfg-%d-%d", i, j);
            snprintf(t[j].status, sizeof t[j].status, "ok");
            snprintf(t[j].message, sizeof t[j].message, "%0100d", j);
        }
        gt_layers_store(&k, SRC, GT_VERSION_MAJOR, &win, t, 20);
        gt_db_winner back;
        if (!gt_layers_lookup(0, &k, SRC, GT_VERSION_MAJOR, &back) || !winner_is(&back, i))
            _exit(11);
        sleep_ms(1);
    }
    if (gt_layers_in_memory()) _exit(12);
    gt_layers_close();
    char other[600];
    snprintf(other, sizeof other, "%s/cache.%s.db", dir, host_names[1 - h]);
    for (int t = 0; t < 10; t++) {
        gt_db *snap = NULL;
        char msg[600], c = 'f';
        if (exists(other) && gt_db_open_snapshot(other, 0, &snap, msg, sizeof msg) == GT_SUCCESS) {
            rows r;
            int n = count_rows(snap, &r);
            c = n >= 0 && r.bad == 0 ? 'k' : 'x';
            for (int i = 0; i < 4096 && c == 'k'; i++)
                if (r.seen[i] && writer_of(i) / PER_HOST != 1 - h) c = 'x';
            gt_db_close(snap);
        }
        if (write(out, &c, 1) != 1) _exit(13);
        sleep_ms(2);
    }
    _exit(0);
}

/* The bytes of path as one read(2) loop finds them until end of file (not the size its
 * attributes claim, which a network client may have cached), malloc'd; NULL on error. */
static unsigned char *read_to_eof(const char *path, size_t *len) {
    *len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return NULL;
    size_t cap = 1 << 16;
    unsigned char *b = malloc(cap);
    ssize_t got;
    while (b && (got = read(fd, b + *len, cap - *len)) > 0) {
        *len += (size_t)got;
        if (*len == cap) {
            unsigned char *nb = realloc(b, cap *= 2);
            if (!nb) free(b);
            b = nb;
        }
    }
    close(fd);
    return b;
}

/* A reader on a third host while the writers run: every 2 ms it takes a snapshot of
 * host h's file ('k' consistent, 'e' empty, 'x' inconsistent, 'f' refused, 'n' no file
 * yet), and a raw copy of the
 * file's bytes, read without any lock as a careless reader would, which it then
 * snapshots from a file of its own ('T' refused as torn, 'R' accepted and consistent,
 * 'X' accepted but inconsistent: a torn read that got through). Until `until` (seconds
 * on the monotonic clock). */
static void reader_child(int h, const char *dir, int out, double until) {
    char path[600], copy[700];
    snprintf(path, sizeof path, "%s/cache.%s.db", dir, host_names[h]);
    snprintf(copy, sizeof copy, "%s/reader-copy-%d.db", root, h);
    while (now_s() < until) {
        char c = exists(path) ? 'f' : 'n', msg[600];
        gt_db *snap = NULL;
        rows r;
        if (c == 'f' && gt_db_open_snapshot(path, 0, &snap, msg, sizeof msg) == GT_SUCCESS) {
            int n = count_rows(snap, &r);
            c = n < 0 || r.bad ? 'x' : n > 0 ? 'k' : 'e';
            for (int i = 0; i < 4096 && c == 'k'; i++)
                if (r.seen[i] && writer_of(i) / PER_HOST != h) c = 'x';
            gt_db_close(snap);
        }
        if (write(out, &c, 1) != 1) _exit(13);
        size_t n = 0;
        unsigned char *bytes = read_to_eof(path, &n);
        if (bytes && n > 0 && write_bytes(copy, bytes, n) == 0) {
            c = 'T';
            if (gt_db_open_snapshot(copy, 0, &snap, msg, sizeof msg) == GT_SUCCESS) {
                c = count_rows(snap, &r) >= 0 && r.bad == 0 ? 'R' : 'X';
                gt_db_close(snap);
            }
            if (write(out, &c, 1) != 1) _exit(13);
        }
        free(bytes);
        sleep_ms(2);
    }
    _exit(0);
}

/* Eight processes, four on each of two hosts (an injected host name, an injected NFS),
 * write one directory at once: each host's file is intact and holds exactly its own
 * processes' winners, nothing is lost, no file is WAL and the shared name is never
 * written; each host then reads the other's winners as a layer. Snapshots taken while
 * the other host writes are never inconsistent.
 * TEST_FS_MOUNTS=A:B runs it across a real network filesystem instead: A and B are two
 * mounts (two clients, each with its own caches) of one exported directory, found by
 * the library's own detection; host 0 works through A, host 1 through B, and each reads
 * the other's file through its own mount. */
static void two_hosts_write_one_directory(void) {
    char dir[2][400], nominal[700];
    const char *mounts = getenv("TEST_FS_MOUNTS");
    const char *colon = mounts ? strchr(mounts, ':') : NULL;
    if (colon) {
        char sub[64];
        snprintf(sub, sizeof sub, "gemmtune-test-fs-%ld", (long)getpid());
        snprintf(dir[0], sizeof dir[0], "%.*s/%s", (int)(colon - mounts) & 255, mounts, sub);
        snprintf(dir[1], sizeof dir[1], "%.255s/%s", colon + 1, sub);
        TAP_CHECK(mkdir(dir[0], 0755) == 0, "mkdir %s: %s", dir[0], strerror(errno));
        unsetenv("GEMMTUNE_CACHE_FS");
        for (int h = 0; h < HOSTS; h++) {
            gt_fs_info fs;
            snprintf(nominal, sizeof nominal, "%.399s/cache.db", dir[h]);
            gt_fs_probe(nominal, &fs);
            printf("# %s: %s, per host %d\n", dir[h], fs.type, fs.per_host);
            TAP_CHECK(fs.per_host, "%s is not recognized as shared (%s)", dir[h], fs.type);
        }
    } else {
        case_dir("cluster", dir[0], sizeof dir[0]);
        snprintf(dir[1], sizeof dir[1], "%s", dir[0]);
        setenv("GEMMTUNE_CACHE_FS", "nfs", 1);
    }
    snprintf(nominal, sizeof nominal, "%s/cache.db", dir[0]);
    unsetenv("GEMMTUNE_CACHE_PATH");
    int pfd[2];
    TAP_CHECK(pipe(pfd) == 0, "pipe");
    fflush(stdout);
    pid_t pids[WRITERS + HOSTS];
    double t0 = now_s();
    for (int w = 0; w < WRITERS + HOSTS; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            close(pfd[0]);
            if (w < WRITERS) writer_child(w, dir[w / PER_HOST], pfd[1]);
            else reader_child(w - WRITERS, dir[1 - (w - WRITERS)], pfd[1], t0 + 0.5);
        }
    }
    close(pfd[1]);
    int count[256] = {0};
    unsigned char c;
    while (read(pfd[0], &c, 1) == 1) count[c]++;
    close(pfd[0]);
    for (int w = 0; w < WRITERS + HOSTS; w++) {
        int status = 0;
        waitpid(pids[w], &status, 0);
        TAP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s %d: status 0x%x",
                  w < WRITERS ? "writer" : "reader", w, status);
    }
    printf("# %d writers on %d hosts, %d readers: %.2f s\n", WRITERS, HOSTS, HOSTS,
           now_s() - t0);
    printf("# snapshots while the files were written: %d consistent (%d of them empty), %d "
           "refused, %d inconsistent, %d before the file existed\n",
           count['k'] + count['e'], count['e'], count['f'], count['x'], count['n']);
    printf("# raw copies read without a lock meanwhile: %d refused as torn, %d accepted "
           "(consistent), %d accepted inconsistent\n", count['T'], count['R'], count['X']);
    TAP_CHECK(count['x'] == 0, "%d inconsistent snapshots", count['x']);
    TAP_CHECK(count['X'] == 0, "%d torn raw copies accepted", count['X']);
    TAP_CHECK(count['k'] > 0, "no snapshot succeeded (%d refused)", count['f']);

    TAP_CHECK(!exists(nominal), "the shared name %s was written", nominal);
    for (int h = 0; h < HOSTS; h++) {
        char path[700], ok[32];
        snprintf(path, sizeof path, "%.399s/cache.%s.db", dir[1 - h], host_names[h]);
        /* Side files as the writing host's own client sees them: another client may
         * still list a journal its directory cache remembers. */
        char own[700];
        snprintf(own, sizeof own, "%.399s/cache.%s.db", dir[h], host_names[h]);
        TAP_CHECK(journal_kind(path) == 1, "%s: journal kind %d", path, journal_kind(path));
        TAP_CHECK(no_side_files(own), "%s: side files left", own);
        raw_text(path, 1, "PRAGMA integrity_check", ok, sizeof ok);
        TAP_CHECK(strcmp(ok, "ok") == 0, "%s: integrity_check %s", path, ok);
        gt_db *snap = snapshot(path, 0);
        rows r;
        int n = snap ? count_rows(snap, &r) : -1;
        TAP_CHECK(n == PER_HOST * KEYS_EACH && r.bad == 0, "%s: %d rows, %d bad", path, n, r.bad);
        for (int i = 0; i < WRITERS * KEYS_EACH && snap; i++)
            TAP_CHECK(r.seen[i] == (writer_of(i) / PER_HOST == h), "%s: key %d", path, i);
        gt_db_close(snap);
    }

    /* Each host reads the other's results as a layer. */
    for (int h = 0; h < HOSTS; h++) {
        snprintf(nominal, sizeof nominal, "%.399s/cache.db", dir[h]);
        setenv("GEMMTUNE_CACHE", nominal, 1);
        gt_fs_set_test_host(host_names[h]);
        gt_layers_open();
        char other[700];
        snprintf(other, sizeof other, "%.399s/cache.%s.db", dir[h], host_names[1 - h]);
        int open = 0;
        const char *hp = gt_layers_host_path(0, &open);
        TAP_CHECK(hp && strcmp(hp, other) == 0 && open, "host %s: layer of %s: %s", host_names[h],
                  other, hp ? hp : "(none)");
        TAP_CHECK(gt_layers_host_path(1, NULL) == NULL, "more than one other host");
        int own = 0, theirs = 0;
        for (int i = 0; i < WRITERS * KEYS_EACH; i++) {
            gt_key k;
            gt_db_winner w;
            make_key(&k, i);
            int mine = writer_of(i) / PER_HOST == h;
            if (gt_layers_lookup(0, &k, SRC, GT_VERSION_MAJOR, &w) && winner_is(&w, i)) own++;
            else if (!mine && gt_layers_lookup(1, &k, SRC, GT_VERSION_MAJOR, &w) &&
                     winner_is(&w, i))
                theirs++;
        }
        TAP_CHECK(own == PER_HOST * KEYS_EACH && theirs == PER_HOST * KEYS_EACH,
                  "host %s: %d own, %d of the other host", host_names[h], own, theirs);
        gt_layers_close();
    }
    gt_fs_set_test_host(NULL);
    unsetenv("GEMMTUNE_CACHE_FS");
}

/* ===================================================================================
 * Never losing tuning work
 * =================================================================================== */

static void store_via_layers(int i) {
    gt_key k;
    gt_db_winner w;
    make_key(&k, i);
    make_winner(&w, i, "me");
    gt_layers_store(&k, SRC, GT_VERSION_MAJOR, &w, NULL, 0);
}

static int layer0_holds(int i) {
    gt_key k;
    gt_db_winner w;
    make_key(&k, i);
    return gt_layers_lookup(0, &k, SRC, GT_VERSION_MAJOR, &w) && winner_is(&w, i);
}

static int count_near(const gt_key *key, const char *src, int major, const gt_db_winner *w,
                      void *user) {
    (void)key, (void)src, (void)major, (void)w;
    ++*(int *)user;
    return 0;
}

/* Where no writable cache is usable (it cannot be made; a host file that is refused; one
 * that fails mid-run), one warning says so and the winners, their neighbours and the
 * binaries stay in the process. */
static void no_writable_cache_keeps_results(void) {
    char dir[512], path[700];
    case_dir("nowrite", dir, sizeof dir);
    unsetenv("GEMMTUNE_CACHE_PATH");
    unsetenv("GEMMTUNE_CACHE_FS");

    /* 1. A regular file where the cache's directory should be. */
    char blocker[600];
    snprintf(blocker, sizeof blocker, "%s/blocker", dir);
    touch_at(blocker, 1000);
    snprintf(path, sizeof path, "%s/cache.db", blocker);
    setenv("GEMMTUNE_CACHE", path, 1);
    capture_begin();
    gt_layers_open();
    int open = 1;
    gt_layers_user_path(&open);
    TAP_CHECK(!open, "the user cache opened");
    for (int i = 0; i < 3; i++) store_via_layers(i);
    int held = 0;
    for (int i = 0; i < 3; i++) held += layer0_holds(i);
    gt_key k;
    make_key(&k, 10);
    int near = 0;
    gt_layers_neighbors(0, &k, SRC, GT_VERSION_MAJOR, count_near, &near);
    gt_db_bin_key bk = {SRC, "f32|NN|64x64x64|a16|b1|cfg", 90, "13.0", "13000"};
    static const unsigned char image[64] = {0x7f, 'E', 'L', 'F'};
    gt_layers_bin_put(&bk, image, sizeof image);
    size_t size = 0;
    void *got = gt_layers_bin_get(&bk, &size);
    capture_end();
    TAP_CHECK(held == 3 && near == 3, "kept %d winners, %d neighbours", held, near);
    TAP_CHECK(got && size == sizeof image && memcmp(got, image, size) == 0, "binary kept");
    free(got);
    TAP_CHECK(gt_layers_in_memory(), "not in memory");
    TAP_CHECK(nwarnings == 1 && strstr(warnings, "kept in this process only"),
              "%d warnings: %s", nwarnings, warnings);
    gt_layers_close();

    /* 2. Per host: this host's file is a WAL file, refused. */
    char pdir[600], nominal[700], mine[700];
    snprintf(pdir, sizeof pdir, "%s/perhost", dir);
    mkdir(pdir, 0755);
    snprintf(nominal, sizeof nominal, "%s/cache.db", pdir);
    snprintf(mine, sizeof mine, "%s/cache.me.db", pdir);
    gt_db *db = NULL;
    char msg[600];
    TAP_CHECK(gt_db_open(mine, 0, 0, &db, msg, sizeof msg) == GT_SUCCESS, "%s", msg);
    gt_db_close(db);
    setenv("GEMMTUNE_CACHE", nominal, 1);
    setenv("GEMMTUNE_CACHE_FS", "lustre", 1);
    gt_fs_set_test_host("me");
    capture_begin();
    gt_layers_open();
    store_via_layers(5);
    int kept = layer0_holds(5);
    capture_end();
    TAP_CHECK(kept, "winner lost");
    TAP_CHECK(nwarnings == 1 && strstr(warnings, "WAL mode") &&
                  strstr(warnings, "kept in this process only"),
              "%d warnings: %s", nwarnings, warnings);
    gt_layers_close();
    gt_fs_set_test_host(NULL);
    unsetenv("GEMMTUNE_CACHE_FS");

    /* 3. A usable cache that fails mid-run (its size cap): it is bypassed from then on
     * (layers.h, invariant 1) and keeps what it had; what comes after, the binary it
     * refused included, goes to memory; one warning. */
    snprintf(path, sizeof path, "%s/capped.db", dir);
    setenv("GEMMTUNE_CACHE", path, 1);
    setenv("GEMMTUNE_CACHE_MAX_MB", "1", 1);
    capture_begin();
    gt_layers_open();
    store_via_layers(20);
    size_t big = 3u << 20;
    unsigned char *huge = calloc(1, big);
    gt_db_bin_key bk2 = {SRC, "f32|NN|64x64x64|a16|b1|huge", 90, "13.0", "13000"};
    if (huge) gt_layers_bin_put(&bk2, huge, big);
    store_via_layers(21);
    store_via_layers(22);
    int h21 = layer0_holds(21), h22 = layer0_holds(22);
    got = gt_layers_bin_get(&bk2, &size);
    capture_end();
    TAP_CHECK(h21 && h22, "held %d %d", h21, h22);
    TAP_CHECK(got && size == big, "the binary the full cache refused is lost");
    free(got), free(huge);
    TAP_CHECK(nwarnings == 1 && strstr(warnings, "kept in this process only"),
              "%d warnings: %s", nwarnings, warnings);
    gt_layers_close();
    unsetenv("GEMMTUNE_CACHE_MAX_MB");
    db = NULL;
    TAP_CHECK(gt_db_open(path, 1, 0, &db, msg, sizeof msg) == GT_SUCCESS, "%s", msg);
    TAP_CHECK(db && holds(db, 20) && !holds(db, 21), "the capped file's own winner");
    gt_db_close(db);
}

/* ===================================================================================
 * The command
 * =================================================================================== */

typedef struct {
    int code;
    char *out, *err;
} result;

/* Runs `gemmtune args...` with env ("NAME=VALUE"; no driver library), its output kept. */
static void run_cmd(result *r, const char *const *env, const char *const *args) {
    const char *exe = getenv("GEMMTUNE_EXE");
    memset(r, 0, sizeof *r);
    char outp[600], errp[600];
    snprintf(outp, sizeof outp, "%s/stdout.txt", root);
    snprintf(errp, sizeof errp, "%s/stderr.txt", root);
    const char *argv[32];
    int argc = 0;
    argv[argc++] = exe ? exe : "gemmtune";
    for (int i = 0; args[i] && argc < 31; i++) argv[argc++] = args[i];
    argv[argc] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int out = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0) _exit(126);
        dup2(out, 1), dup2(err, 2);
        setenv("GEMMTUNE_LIBCUDA", "/nonexistent/gemmtune-test-libcuda.so.1", 1);
        unsetenv("GEMMTUNE_LOG");
        unsetenv("GEMMTUNE_CACHE_PATH");
        for (int i = 0; env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
            setenv(name, eq + 1, 1);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    r->out = slurp(outp);
    r->err = slurp(errp);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define CHECK_RUN(r, cond, ...)                                                            \
    do {                                                                                   \
        TAP_CHECK(cond, __VA_ARGS__);                                                      \
        if (!(cond))                                                                       \
            printf("#   exit %d\n#   stdout: %.900s\n#   stderr: %.600s\n", (r)->code,        \
                   (r)->out ? (r)->out : "", (r)->err ? (r)->err : "");                    \
    } while (0)

/* `gemmtune info` names the filesystem and the policy, this host's file beside the named
 * one, and the other hosts' files it reads; on the real filesystem, what statfs says. */
static void info_shows_policy(void) {
    if (!getenv("GEMMTUNE_EXE")) TAP_SKIP("GEMMTUNE_EXE is not set");
    char dir[512], nominal[600], other[600], mine[600], host[64], env1[700];
    case_dir("info", dir, sizeof dir);
    snprintf(nominal, sizeof nominal, "%s/cache.db", dir);
    snprintf(other, sizeof other, "%s/cache.other.db", dir);
    gt_fs_set_test_host(NULL);
    TAP_CHECK(gt_fs_host(host, sizeof host) == 0, "host name");
    gt_fs_host_path(nominal, host, mine, sizeof mine);
    gt_db *db = open_host(other);
    if (db) store_key(db, 1, "other");
    gt_db_close(db);
    snprintf(env1, sizeof env1, "GEMMTUNE_CACHE=%s", nominal);

    result r;
    run_cmd(&r, ARGS(env1, "GEMMTUNE_CACHE_FS=lustre"), ARGS("info"));
    char want[2000];
    snprintf(want, sizeof want, "cache: %s (usable; this host's file beside %s)\n", mine, nominal);
    CHECK_RUN(&r, strstr(r.out, want), "no '%s'", want);
    CHECK_RUN(&r, strstr(r.out, "cache filesystem: lustre, network or parallel "
                                "(GEMMTUNE_CACHE_FS=lustre)\n"),
              "no filesystem line");
    CHECK_RUN(&r, strstr(r.out, "cache policy: one file per host"), "no policy line");
    snprintf(want, sizeof want, "host cache 1: %s (usable, read-only snapshot)\n", other);
    CHECK_RUN(&r, strstr(r.out, want), "no '%s'", want);
    TAP_CHECK(!exists(nominal) && journal_kind(mine) == 1 && no_side_files(mine),
              "info wrote the shared name, or a WAL file");
    free(r.out), free(r.err);

    /* The real filesystem of the directory, as this process finds it. */
    gt_fs_info fs;
    unsetenv("GEMMTUNE_CACHE_FS");
    gt_fs_probe(nominal, &fs);
    run_cmd(&r, ARGS(env1), ARGS("info"));
    snprintf(want, sizeof want, "cache filesystem: %s, %s (detected)\n", fs.type,
             fs.shared ? "network or parallel" : "local");
    CHECK_RUN(&r, strstr(r.out, want), "no '%s'", want);
    CHECK_RUN(&r, strstr(r.out, fs.per_host ? "cache policy: one file per host"
                                            : "cache policy: one file for this machine"),
              "policy line");
    free(r.out), free(r.err);

    run_cmd(&r, ARGS(env1, "GEMMTUNE_CACHE_FS=shared"), ARGS("info"));
    snprintf(want, sizeof want, "cache filesystem: %s, %s (GEMMTUNE_CACHE_FS=shared)\n",
             fs.type, fs.shared ? "network or parallel" : "local");
    CHECK_RUN(&r, strstr(r.out, want) && strstr(r.out, "one file per host"), "no '%s'", want);
    free(r.out), free(r.err);
}

#define CFG_64 "f0_64x64x16_w32x16_t4x4_s2_v4_k1_r1"
#define CFG_128 "f0_128x128x16_w32x64_t8x8_s3_v4_k1_r8"

static void put_fixture(gt_db *db, int i, const char *cfg, double us, const char *host) {
    gt_key k;
    fixture_key(&k, 90, 0, 0, 256 * (i + 1), 256, 256, 16, 1);
    gt_db_winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.config, sizeof w.config, "%s", cfg);
    w.time_us = us;
    w.tflops = 1;
    w.tuned_at = 1700000000;
    snprintf(w.host, sizeof w.host, "%s", host);
    gt_status s = gt_db_store(db, &k, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, NULL, 0);
    TAP_CHECK(s == GT_SUCCESS, "fixture store: %s", gt_db_errmsg(db));
}

/* On a shared filesystem merge combines the hosts' files into a file that is no WAL file,
 * and import writes this host's file, never the shared name. */
static void merge_and_import_per_host(void) {
    if (!getenv("GEMMTUNE_EXE")) TAP_SKIP("GEMMTUNE_EXE is not set");
    char dir[512], n1[600], n2[600], site[600], nominal[600], mine[600], host[64], env1[700];
    case_dir("merge", dir, sizeof dir);
    snprintf(n1, sizeof n1, "%s/cache.n1.db", dir);
    snprintf(n2, sizeof n2, "%s/cache.n2.db", dir);
    snprintf(site, sizeof site, "%s/site.db", dir);
    snprintf(nominal, sizeof nominal, "%s/cache.db", dir);
    gt_fs_set_test_host(NULL);
    gt_fs_host(host, sizeof host);
    gt_fs_host_path(nominal, host, mine, sizeof mine);
    gt_db *a = open_host(n1), *b = open_host(n2);
    if (a) put_fixture(a, 0, CFG_64, 50, "n1"), put_fixture(a, 1, CFG_64, 40, "n1");
    if (b) put_fixture(b, 1, CFG_128, 30, "n2"), put_fixture(b, 2, CFG_128, 20, "n2");
    gt_db_close(a), gt_db_close(b);
    snprintf(env1, sizeof env1, "GEMMTUNE_CACHE=%s", nominal);

    result r;
    run_cmd(&r, ARGS(env1, "GEMMTUNE_CACHE_FS=nfs"), ARGS("merge", n1, n2, "-o", site));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "merged 3 entries"), "merge");
    free(r.out), free(r.err);
    TAP_CHECK(journal_kind(site) == 1 && no_side_files(site), "site.db: journal kind %d",
              journal_kind(site));
    gt_db *snap = snapshot(site, 1);
    gt_key k;
    gt_db_winner w;
    int found = 0;
    fixture_key(&k, 90, 0, 0, 512, 256, 256, 16, 1);
    if (snap) gt_db_lookup(snap, &k, gt_kernel_source_hash, GT_VERSION_MAJOR, &w, &found);
    TAP_CHECK(found && strcmp(w.config, CFG_128) == 0 && strcmp(w.host, "n2") == 0,
              "the faster of the two hosts' entries: %s from %s", found ? w.config : "-",
              found ? w.host : "-");
    gt_db_close(snap);

    run_cmd(&r, ARGS(env1, "GEMMTUNE_CACHE_FS=nfs"), ARGS("import", site));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, "imported 3 entries") && strstr(r.out, mine),
              "import into %s", mine);
    free(r.out), free(r.err);
    TAP_CHECK(!exists(nominal) && journal_kind(mine) == 1 && no_side_files(mine),
              "import wrote the shared name or a WAL file");
    run_cmd(&r, ARGS(env1, "GEMMTUNE_CACHE_FS=nfs"), ARGS("list"));
    CHECK_RUN(&r, r.code == 0 && strstr(r.out, CFG_128) && strstr(r.out, CFG_64), "list");
    free(r.out), free(r.err);
}

/* ===================================================================================
 * Main
 * =================================================================================== */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int main(void) {
    snprintf(root, sizeof root, "/tmp/gemmtune-test-fs-XXXXXX");
    if (!mkdtemp(root)) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    unsetenv("GEMMTUNE_CACHE_FS");
    unsetenv("GEMMTUNE_CACHE_MAX_MB");
    unsetenv("GEMMTUNE_CACHE_TIMEOUT_MS");
    TAP_RUN(fs_type_table);
    TAP_RUN(fs_probe);
    TAP_RUN(fs_host_names);
    TAP_RUN(fs_other_hosts);
    TAP_RUN(nodelock_exclusion);
    TAP_RUN(host_file_no_wal_no_fs_locks);
    TAP_RUN(host_file_refuses_wal);
    TAP_RUN(host_file_writer_killed);
    TAP_RUN(snapshot_basics);
    TAP_RUN(snapshot_rejects_torn);
    TAP_RUN(two_hosts_write_one_directory);
    TAP_RUN(no_writable_cache_keeps_results);
    TAP_RUN(info_shows_policy);
    TAP_RUN(merge_and_import_per_host);
    if (!getenv("TEST_FS_KEEP")) nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
