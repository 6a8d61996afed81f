/*
** A VFS shim that writes SQLite's WAL frames in batches.
**
** SQLite writes each frame of a commit as two calls, its 24-byte header
** and then its page. This shim holds the frames a transaction appends and
** writes them at once: when the commit frame's page arrives (the frame
** whose header carries the database's size), when its buffer is full, or
** before anything else is done with the WAL file. SQLite makes a commit
** visible to other connections only after its frames are written, in the
** wal-index, so the batch is on the file by then.
**
** Frames still held when the connection gives up the WAL's write lock
** were never committed (a transaction that spilled pages and rolled
** back): they are dropped, not written, since another connection may
** write its own frames where they would have gone. The shim sees that
** lock through the database file, which it wraps for that alone; its
** other methods are the underlying VFS's.
**
** Every file that is neither a database nor a WAL is the underlying VFS's
** own, opened in place, so it costs nothing.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3vfs.h"
#include "walvfs.h"

#define FRAME_HEADER 24
#define WAL_HEADER 32
/* The WAL's write lock is slot 0 of the wal-index's locks. */
#define WAL_WRITE_LOCK 0
/* What a WAL file holds before it writes: the most the unix VFS writes
** in one call (it masks a write's length with 0x1ffff), 31 frames of
** 4 KiB pages. */
#define BUF_CAP 0x1ffff

/* What both wrapped files start with: the file SQLite sees, and the
** underlying VFS's, just after the wrapper. */
typedef struct shimFile {
  sqlite3_file base;
  sqlite3_file *real;
} shimFile;

typedef struct walFile walFile;
struct walFile {
  shimFile s;
  const char *db;       /* its database's name, as SQLite passed it */
  walFile *nextOpen;    /* the list of open WAL files */
  unsigned char *buf;   /* frames held; allocated at the first */
  int len;              /* bytes held */
  sqlite3_int64 start;  /* the file offset of buf[0] */
  sqlite3_int64 next;   /* where the next appended frame goes; -1: unknown */
  sqlite3_int64 hdrEnd; /* the end of a header written through by the last
                        ** write, or -1 */
  int wantPage;         /* buf ends with a frame's header */
  int commit;           /* that header is a commit frame's */
  int page;             /* the size of the last page, to see if one fits */
  int failed;           /* a write of held frames failed: this code until
                        ** the write lock is given up */
};

typedef struct dbFile {
  shimFile s;
  const char *name; /* as SQLite passed it: its WAL's walFile.db */
} dbFile;

static sqlite3_vfs *orig;
static unsigned long long statFrames, statWrites;

/* How many of the next writes of held frames fail, as a full or failing
** disk would fail them: set by the package's tests alone. */
static int failFlushes;

/* The open WAL files, for a database file to find its own. */
static pthread_mutex_t openMu = PTHREAD_MUTEX_INITIALIZER;
static walFile *openWals;

/* The underlying VFS's methods, for both wrapped files. */
#define REAL(f) (((shimFile *)(f))->real)

static int passClose(sqlite3_file *f) { return REAL(f)->pMethods->xClose(REAL(f)); }
static int passRead(sqlite3_file *f, void *z, int n, sqlite3_int64 off) {
  return REAL(f)->pMethods->xRead(REAL(f), z, n, off);
}
static int passWrite(sqlite3_file *f, const void *z, int n, sqlite3_int64 off) {
  return REAL(f)->pMethods->xWrite(REAL(f), z, n, off);
}
static int passTruncate(sqlite3_file *f, sqlite3_int64 size) {
  return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int passSync(sqlite3_file *f, int flags) { return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int passFileSize(sqlite3_file *f, sqlite3_int64 *size) {
  return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int passLock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int passUnlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int passCheckReservedLock(sqlite3_file *f, int *out) {
  return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int passFileControl(sqlite3_file *f, int op, void *arg) {
  return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int passSectorSize(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int passDeviceCharacteristics(sqlite3_file *f) {
  return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int passShmMap(sqlite3_file *f, int pg, int size, int extend, void volatile **pp) {
  return REAL(f)->pMethods->xShmMap(REAL(f), pg, size, extend, pp);
}
static void passShmBarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int passShmUnmap(sqlite3_file *f, int del) { return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }
static int passFetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp) {
  return REAL(f)->pMethods->xFetch(REAL(f), off, n, pp);
}
static int passUnfetch(sqlite3_file *f, sqlite3_int64 off, void *p) {
  return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

static int writeThrough(walFile *p, const void *z, int n, sqlite3_int64 off) {
  int rc = passWrite(&p->s.base, z, n, off);
  __atomic_fetch_add(&statWrites, 1, __ATOMIC_RELAXED);
  if (rc != SQLITE_OK) p->next = -1;
  return rc;
}

/* failNext says whether this write of held frames is one failFlushes
** fails. */
static int failNext(void) {
  return __atomic_load_n(&failFlushes, __ATOMIC_RELAXED) > 0 &&
         __atomic_sub_fetch(&failFlushes, 1, __ATOMIC_RELAXED) >= 0;
}

/* flushFrames writes what is held. A failure is the transaction's: every
** later write returns it, so that the transaction cannot commit frames
** that are not on the file. */
static int flushFrames(walFile *p) {
  int rc;
  if (p->len == 0) return SQLITE_OK;
  rc = failNext() ? SQLITE_IOERR_WRITE : writeThrough(p, p->buf, p->len, p->start);
  p->len = 0;
  p->wantPage = 0;
  p->commit = 0;
  if (rc != SQLITE_OK) {
    p->next = -1;
    p->failed = rc;
  }
  return rc;
}

/* flushFor is flushFrames for a call other than a write, which SQLite
** would not take a full disk from. */
static int flushFor(walFile *p) {
  int rc = flushFrames(p);
  return rc == SQLITE_FULL ? SQLITE_IOERR_WRITE : rc;
}

/* dropFrames forgets what is held, at the end of a write transaction:
** a commit has written its frames, so these were rolled back, and the
** next transaction appends where they began. */
static void dropFrames(walFile *p) {
  if (p->len > 0 || p->wantPage) p->next = -1;
  p->len = 0;
  p->wantPage = 0;
  p->commit = 0;
  p->hdrEnd = -1;
  p->failed = 0;
}

/* isPage says whether n is a page's size: a power of two from 512 to
** 65536, which a part of a page split at a sync point is not. */
static int isPage(int n) {
  return n >= 512 && n <= 65536 && (n & (n - 1)) == 0;
}

static int walWrite(sqlite3_file *f, const void *z, int n, sqlite3_int64 off) {
  walFile *p = (walFile *)f;
  const unsigned char *b = z;
  int rc;
  sqlite3_int64 end = p->len ? p->start + p->len : p->next;
  sqlite3_int64 hdrEnd = p->hdrEnd;

  if (p->failed) return p->failed;
  p->hdrEnd = -1;

  /* A frame's header where the last frame ended. */
  if (n == FRAME_HEADER && !p->wantPage && off == end && end >= WAL_HEADER) {
    if (p->len + FRAME_HEADER + p->page > BUF_CAP) {
      rc = flushFrames(p);
      if (rc != SQLITE_OK) return rc;
    }
    if (p->buf == 0) p->buf = malloc(BUF_CAP);
    if (p->buf != 0) {
      if (p->len == 0) p->start = off;
      memcpy(p->buf + p->len, b, n);
      p->len += n;
      p->wantPage = 1;
      p->commit = (b[4] | b[5] | b[6] | b[7]) != 0;
      return SQLITE_OK;
    }
  }
  /* Its page, just after it. */
  if (p->wantPage && off == end && isPage(n)) {
    int commit = p->commit;
    __atomic_fetch_add(&statFrames, 1, __ATOMIC_RELAXED);
    p->page = n;
    if (p->len + n > BUF_CAP) {
      rc = flushFrames(p);
      if (rc != SQLITE_OK) return rc;
      rc = writeThrough(p, z, n, off);
      if (rc == SQLITE_OK) p->next = off + n;
      return rc;
    }
    memcpy(p->buf + p->len, b, n);
    p->len += n;
    p->wantPage = 0;
    p->next = off + n;
    if (commit || p->len + FRAME_HEADER + n > BUF_CAP) return flushFrames(p);
    return SQLITE_OK;
  }
  /* Anything else (the WAL's header, a page written again in place, the
  ** checksums rewritten at a commit, a page split at a sync point) goes
  ** after what is held, as SQLite wrote it. */
  rc = flushFrames(p);
  if (rc != SQLITE_OK) return rc;
  rc = writeThrough(p, z, n, off);
  if (rc != SQLITE_OK) return rc;
  if (off == 0 && n == WAL_HEADER) {
    p->next = WAL_HEADER; /* a new WAL: its frames follow */
  } else if (off == hdrEnd && isPage(n)) {
    p->next = off + n; /* a frame written through: the next one follows */
  } else if (n == FRAME_HEADER) {
    p->hdrEnd = off + n; /* maybe a frame's header: see what follows */
  } else if (off + n > p->next) {
    p->next = -1; /* not a whole frame where one would go */
  }
  return SQLITE_OK;
}

static int walRead(sqlite3_file *f, void *z, int n, sqlite3_int64 off) {
  walFile *p = (walFile *)f;
  int rc = flushFor(p);
  if (rc != SQLITE_OK) return rc;
  return passRead(f, z, n, off);
}

static int walClose(sqlite3_file *f) {
  walFile *p = (walFile *)f;
  walFile **q;
  int rc = p->failed ? SQLITE_OK : flushFor(p);
  int rc2 = passClose(f);
  pthread_mutex_lock(&openMu);
  for (q = &openWals; *q != 0; q = &(*q)->nextOpen) {
    if (*q == p) {
      *q = p->nextOpen;
      break;
    }
  }
  pthread_mutex_unlock(&openMu);
  free(p->buf);
  p->buf = 0;
  return rc != SQLITE_OK ? rc : rc2;
}

static int walTruncate(sqlite3_file *f, sqlite3_int64 size) {
  walFile *p = (walFile *)f;
  int rc = flushFor(p);
  if (rc != SQLITE_OK) return rc;
  if (p->next > size) p->next = -1;
  return passTruncate(f, size);
}

static int walSync(sqlite3_file *f, int flags) {
  walFile *p = (walFile *)f;
  int rc = p->failed ? p->failed : flushFor(p);
  if (rc != SQLITE_OK) return rc;
  return passSync(f, flags);
}

static int walFileSize(sqlite3_file *f, sqlite3_int64 *size) {
  walFile *p = (walFile *)f;
  int rc = flushFor(p);
  if (rc != SQLITE_OK) return rc;
  return passFileSize(f, size);
}

static int walFileControl(sqlite3_file *f, int op, void *arg) {
  walFile *p = (walFile *)f;
  int rc = flushFor(p);
  if (rc != SQLITE_OK) return rc;
  return passFileControl(f, op, arg);
}

/* Version 1: a WAL file is never mapped and holds no shared memory. */
static const sqlite3_io_methods walMethods = {
    1,
    walClose,
    walRead,
    walWrite,
    walTruncate,
    walSync,
    walFileSize,
    passLock,
    passUnlock,
    passCheckReservedLock,
    walFileControl,
    passSectorSize,
    passDeviceCharacteristics,
};

/* dbShmLock takes or gives up wal-index locks. The write lock given up
** ends a write transaction: what its connection's WAL still holds then
** was rolled back, since a commit writes its frames. */
static int dbShmLock(sqlite3_file *f, int ofst, int n, int flags) {
  dbFile *d = (dbFile *)f;
  walFile *w;
  int rc = REAL(f)->pMethods->xShmLock(REAL(f), ofst, n, flags);
  if (rc == SQLITE_OK && flags == (SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE) &&
      ofst <= WAL_WRITE_LOCK && WAL_WRITE_LOCK < ofst + n) {
    pthread_mutex_lock(&openMu);
    for (w = openWals; w != 0; w = w->nextOpen) {
      if (w->db == d->name) dropFrames(w);
    }
    pthread_mutex_unlock(&openMu);
  }
  return rc;
}

/* The database file: the underlying VFS's methods, and its WAL's frames
** dropped when the write lock is given up (dbShmLock). */
static const sqlite3_io_methods dbMethods = {
    3,
    passClose,
    passRead,
    passWrite,
    passTruncate,
    passSync,
    passFileSize,
    passLock,
    passUnlock,
    passCheckReservedLock,
    passFileControl,
    passSectorSize,
    passDeviceCharacteristics,
    passShmMap,
    dbShmLock,
    passShmBarrier,
    passShmUnmap,
    passFetch,
    passUnfetch,
};

static int openWal(sqlite3_filename name, walFile *p, int flags, int *outFlags) {
  int rc;
  memset(p, 0, sizeof(*p));
  p->s.real = (sqlite3_file *)&p[1];
  p->next = -1;
  p->hdrEnd = -1;
  p->db = name ? sqlite3_filename_database(name) : 0;
  rc = orig->xOpen(orig, name, p->s.real, flags, outFlags);
  /* SQLite closes a file whose methods are set, even after a failure. */
  if (p->s.real->pMethods == 0) {
    p->s.base.pMethods = 0;
    return rc;
  }
  p->s.base.pMethods = &walMethods;
  pthread_mutex_lock(&openMu);
  p->nextOpen = openWals;
  openWals = p;
  pthread_mutex_unlock(&openMu);
  return rc;
}

static int openDB(sqlite3_filename name, dbFile *d, int flags, int *outFlags) {
  int rc;
  memset(d, 0, sizeof(*d));
  d->s.real = (sqlite3_file *)&d[1];
  d->name = name;
  rc = orig->xOpen(orig, name, d->s.real, flags, outFlags);
  if (d->s.real->pMethods == 0) {
    d->s.base.pMethods = 0;
    return rc;
  }
  /* Only the unix VFS's version 3 methods are wrapped whole. */
  if (d->s.real->pMethods->iVersion < 3) {
    d->s.real->pMethods->xClose(d->s.real);
    d->s.base.pMethods = 0;
    return SQLITE_IOERR;
  }
  d->s.base.pMethods = &dbMethods;
  return rc;
}

static int shimOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f,
                    int flags, int *outFlags) {
  (void)vfs;
  if (flags & SQLITE_OPEN_WAL) return openWal(name, (walFile *)f, flags, outFlags);
  if ((flags & SQLITE_OPEN_MAIN_DB) && name != 0) return openDB(name, (dbFile *)f, flags, outFlags);
  return orig->xOpen(orig, name, f, flags, outFlags);
}

static int shimDelete(sqlite3_vfs *v, const char *name, int syncDir) {
  (void)v;
  return orig->xDelete(orig, name, syncDir);
}
static int shimAccess(sqlite3_vfs *v, const char *name, int flags, int *out) {
  (void)v;
  return orig->xAccess(orig, name, flags, out);
}
static int shimFullPathname(sqlite3_vfs *v, const char *name, int n, char *out) {
  (void)v;
  return orig->xFullPathname(orig, name, n, out);
}
static void *shimDlOpen(sqlite3_vfs *v, const char *name) {
  (void)v;
  return orig->xDlOpen(orig, name);
}
static void shimDlError(sqlite3_vfs *v, int n, char *msg) {
  (void)v;
  orig->xDlError(orig, n, msg);
}
static void (*shimDlSym(sqlite3_vfs *v, void *h, const char *sym))(void) {
  (void)v;
  return orig->xDlSym(orig, h, sym);
}
static void shimDlClose(sqlite3_vfs *v, void *h) {
  (void)v;
  orig->xDlClose(orig, h);
}
static int shimRandomness(sqlite3_vfs *v, int n, char *out) {
  (void)v;
  return orig->xRandomness(orig, n, out);
}
static int shimSleep(sqlite3_vfs *v, int us) {
  (void)v;
  return orig->xSleep(orig, us);
}
static int shimCurrentTime(sqlite3_vfs *v, double *t) {
  (void)v;
  return orig->xCurrentTime(orig, t);
}
static int shimGetLastError(sqlite3_vfs *v, int n, char *out) {
  (void)v;
  return orig->xGetLastError(orig, n, out);
}
static int shimCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *t) {
  (void)v;
  return orig->xCurrentTimeInt64(orig, t);
}

static sqlite3_vfs shim = {
    2,    /* iVersion: xCurrentTimeInt64, no system calls to swap */
    0,    /* szOsFile, set at registration */
    0,    /* mxPathname, likewise */
    0,    /* pNext */
    ALBEDO_WALVFS_NAME,
    0,    /* pAppData */
    shimOpen,
    shimDelete,
    shimAccess,
    shimFullPathname,
    shimDlOpen,
    shimDlError,
    shimDlSym,
    shimDlClose,
    shimRandomness,
    shimSleep,
    shimCurrentTime,
    shimGetLastError,
    shimCurrentTimeInt64,
};

int albedo_walvfs_register(void) {
  sqlite3_vfs *base;
  int rc, wrap;
  if (orig != 0) return SQLITE_OK;
  /* unix-excl is the unix VFS with one difference: the first read of a
  ** database takes SQLite's lock on it for this process, which keeps
  ** every other process's SQLite connections out, and the connections of
  ** this process then keep the wal-index in memory and lock it among
  ** themselves, without a system call. With the unix VFS every
  ** transaction took its wal-index locks with fcntl: four a read, six a
  ** commit, most of a read by its key. One daemon owns its database, so
  ** nothing is lost. */
  base = sqlite3_vfs_find("unix-excl");
  if (base == 0) base = sqlite3_vfs_find(0);
  if (base == 0 || base->iVersion < 2) return SQLITE_IOERR;
  orig = base;
  wrap = sizeof(walFile) > sizeof(dbFile) ? (int)sizeof(walFile) : (int)sizeof(dbFile);
  shim.szOsFile = wrap + base->szOsFile;
  shim.mxPathname = base->mxPathname;
  rc = sqlite3_vfs_register(&shim, 0);
  if (rc != SQLITE_OK) orig = 0;
  return rc;
}

void albedo_walvfs_fail_flushes(int n) { __atomic_store_n(&failFlushes, n, __ATOMIC_RELAXED); }

void albedo_walvfs_stats(unsigned long long *frames, unsigned long long *writes) {
  *frames = __atomic_load_n(&statFrames, __ATOMIC_RELAXED);
  *writes = __atomic_load_n(&statWrites, __ATOMIC_RELAXED);
}
