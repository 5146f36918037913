/*
 * fs.h: where a cache file lives, and what that allows (README.md, "Cache" and "Cluster
 * recipe").
 *
 * A cache directory on a local filesystem holds one SQLite file in WAL mode that every
 * process of the machine shares. A directory on a network or parallel filesystem (NFS,
 * Lustre, GPFS, BeeGFS, CephFS, SMB, FUSE and the others of GT_FS_TABLE), typically a
 * home directory that every node of a cluster mounts, must never hold a file that two
 * hosts write or a WAL file (its index is shared memory, which does not cross hosts), and
 * its POSIX locks are unreliable or off (Lustre's -o noflock). There each host writes
 * its own file beside the shared name, `<stem>.<host><ext>` (cache.db ->
 * cache.node17.db), and reads the other hosts' files of the directory as snapshots
 * (layers.h, db.h: gt_db_open_host, gt_db_open_snapshot).
 *
 * Does: recognizes the filesystem of a directory by statfs's magic number, decides the
 * policy (GEMMTUNE_CACHE_FS forces it, or names a type to behave as if on it: a test
 * aid), names this host's file and lists the other hosts' files of a directory.
 * Owns: the table of filesystem types and the test override of the host name. Must not
 * touch: SQLite, the files themselves (it only stats and lists them), the process (no
 * printing: warnings go through base/log.h).
 */
#ifndef GT_FS_H
#define GT_FS_H

#include <stddef.h>
#include <time.h>

/* X(name, statfs magic, shared): shared = 1 for a network, parallel, cluster or FUSE
 * filesystem, which several hosts may mount. Magic numbers as in linux/magic.h and
 * coreutils' fs.h. overlayfs counts as local: it is a container's root, whose upper layer
 * is a local disk. */
#define GT_FS_TABLE(X)                                                                     \
    X("nfs", 0x6969UL, 1)                                                                  \
    X("lustre", 0x0BD00BD0UL, 1)                                                           \
    X("gpfs", 0x47504653UL, 1)                                                             \
    X("beegfs", 0x19830326UL, 1)                                                           \
    X("cephfs", 0x00C36400UL, 1)                                                           \
    X("smb", 0x517BUL, 1)                                                                  \
    X("cifs", 0xFF534D42UL, 1)                                                             \
    X("smb2", 0xFE534D42UL, 1)                                                             \
    X("fuse", 0x65735546UL, 1)                                                             \
    X("afs", 0x5346414FUL, 1)                                                              \
    X("kafs", 0x6B414653UL, 1)                                                             \
    X("gfs2", 0x01161970UL, 1)                                                             \
    X("ocfs2", 0x7461636FUL, 1)                                                            \
    X("panfs", 0xAAD7AAEAUL, 1)                                                            \
    X("orangefs", 0x20030528UL, 1)                                                         \
    X("9p", 0x01021997UL, 1)                                                               \
    X("coda", 0x73757245UL, 1)                                                             \
    X("ncp", 0x564CUL, 1)                                                                  \
    X("acfs", 0x61636673UL, 1)                                                             \
    X("ibrix", 0x013111A8UL, 1)                                                            \
    X("stornext", 0xBEEFDEADUL, 1)                                                         \
    X("vxfs", 0xA501FCF5UL, 1)                                                             \
    X("vboxsf", 0x786F4256UL, 1)                                                           \
    X("vmhgfs", 0xBACBACBCUL, 1)                                                           \
    X("prl_fs", 0x7C7C6673UL, 1)                                                           \
    X("ext4", 0xEF53UL, 0)                                                                 \
    X("xfs", 0x58465342UL, 0)                                                              \
    X("btrfs", 0x9123683EUL, 0)                                                            \
    X("zfs", 0x2FC12FC1UL, 0)                                                              \
    X("f2fs", 0xF2F52010UL, 0)                                                             \
    X("bcachefs", 0xCA451A4EUL, 0)                                                         \
    X("tmpfs", 0x01021994UL, 0)                                                            \
    X("ramfs", 0x858458F6UL, 0)                                                            \
    X("overlayfs", 0x794C7630UL, 0)

/* What gt_fs_probe found for a directory. */
typedef struct gt_fs_info {
    unsigned long magic;  /* statfs's f_type, or the injected type's; 0 when unknown */
    char type[32];        /* "nfs", "ext4", ...; "0x1234abcd" for a type not in the table;
                             "unknown" when statfs failed */
    int shared;           /* the type is one several hosts may mount (GT_FS_TABLE) */
    int per_host;         /* the policy: 1 one file per host (no WAL, node-local locks,
                             the other hosts' files read as snapshots); 0 one shared file
                             in WAL mode */
    char source[64];      /* why: "detected", "GEMMTUNE_CACHE_FS=shared", ... */
} gt_fs_info;

/* The filesystem of the directory holding path (path's parent; the nearest existing
 * ancestor when that does not exist yet) and the policy for it. GEMMTUNE_CACHE_FS:
 * unset or "auto", the type decides; "local" or "shared" force the policy; a type name of
 * GT_FS_TABLE ("nfs", "lustre", ...) acts as if the directory were on that type (a test
 * aid). Any other value warns once and counts as "auto". Never fails: a directory whose
 * statfs fails is "unknown", policy local unless forced. */
void gt_fs_probe(const char *path, gt_fs_info *out);

/* The type of magic: its name in GT_FS_TABLE and whether it is shared; NULL (and
 * *shared = 0) for a type not in the table. shared may be NULL. */
const char *gt_fs_type_name(unsigned long magic, int *shared);

/* This host's name as it appears in file names: gethostname's (or the test override's),
 * with every byte outside [A-Za-z0-9._-] made '_', at most 63 bytes. 0, or -1 when there
 * is none (an empty host name, or gethostname failed). */
int gt_fs_host(char *buf, size_t size);

/* Test aid: the host name gt_fs_host reports from now on in this process (NULL: the real
 * one again). Lets one test process play several hosts. */
void gt_fs_set_test_host(const char *name);

/* This host's file beside nominal: `<stem>.<host><ext>` where ext is nominal's last
 * extension (".db"; none when its name has no dot after the first character).
 * "/h/.cache/gemmtune/cache.db", "node17" -> "/h/.cache/gemmtune/cache.node17.db".
 * 0, or -1 when it does not fit (buf then ""). */
int gt_fs_host_path(const char *nominal, const char *host, char *buf, size_t size);

/* The files of nominal's directory that the policy per_host reads besides this host's
 * own: every `<stem>.<X><ext>` (X of host-name bytes, not this host's) and nominal itself
 * when it exists (a file from before the directory was shared, or from a host that
 * forced "local"); regular files only. fn gets each path and its modification time,
 * newest first (ties by name); it returns nonzero to stop. Returns how many there were
 * (all of them, even past a stop), or -1 when the directory cannot be listed (a missing
 * directory has none: 0). */
typedef int (*gt_fs_file_fn)(const char *path, time_t mtime, void *user);
int gt_fs_other_hosts(const char *nominal, const char *own_host, gt_fs_file_fn fn, void *user);

#endif
