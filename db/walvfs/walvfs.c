/*
** A VFS shim that writes SQLite's WAL frames in batches.
**
** SQLite writes each frame of a commit as two pwrite calls, its 24-byte
** header and then its page, and a page then straddles two pages of the
** kernel's page cache. This shim holds the frames a transaction appends
** and writes them at once: when the commit frame's page arrives (the
** frame whose header carries the database's size), when its buffer is
** full, or before anything else is done with the file. SQLite makes a
** commit visible to other connections only after its frames are written,
** in the wal-index, so the batch is on the file by then; frames held from
** a transaction that spilled and then rolled back are written like any
** other, past the end SQLite knows, as SQLite itself would have written
** them.
**
** Only files opened as a WAL are wrapped. Every other file is the
** underlying VFS's own, opened in place, so it costs nothing.
*/
#include <stdlib.h>
#include <string.h>

#include "sqlite3vfs.h"
#include "walvfs.h"

#define FRAME_HEADER 24
#define WAL_HEADER 32
/* What a WAL file holds before it writes: the most the unix VFS writes
** in one call (it masks a write's length with 0x1ffff), 31 frames of
** 4 KiB pages. */
#define BUF_CAP 0x1ffff

typedef struct walFile {
  sqlite3_file base;
  sqlite3_file *real;   /* the underlying VFS's file, just after this */
  unsigned char *buf;   /* frames held; allocated at the first */
  int len;              /* bytes held */
  sqlite3_int64 start;  /* the file offset of buf[0] */
  sqlite3_int64 next;   /* where the next appended frame goes; -1: unknown */
  sqlite3_int64 hdrEnd; /* the end of a header written through by the last
                        ** write, or -1 */
  int wantPage;         /* buf ends with a frame's header */
  int commit;           /* that header is a commit frame's */
  int page;             /* the size of the last page, to see if one fits */
} walFile;

static sqlite3_vfs *orig;
static unsigned long long statFrames, statWrites;

static int writeThrough(walFile *p, const void *z, int n, sqlite3_int64 off) {
  int rc = p->real->pMethods->xWrite(p->real, z, n, off);
  __atomic_fetch_add(&statWrites, 1, __ATOMIC_RELAXED);
  if (rc != SQLITE_OK) p->next = -1;
  return rc;
}

static int flushFrames(walFile *p) {
  int rc;
  if (p->len == 0) return SQLITE_OK;
  rc = writeThrough(p, p->buf, p->len, p->start);
  p->len = 0;
  p->wantPage = 0;
  p->commit = 0;
  return rc;
}

static int walWrite(sqlite3_file *f, const void *z, int n, sqlite3_int64 off) {
  walFile *p = (walFile *)f;
  const unsigned char *b = z;
  int rc;
  sqlite3_int64 end = p->len ? p->start + p->len : p->next;
  sqlite3_int64 hdrEnd = p->hdrEnd;

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
  if (p->wantPage && off == end) {
    int commit = p->commit;
    p->page = n;
    p->next = off + n;
    __atomic_fetch_add(&statFrames, 1, __ATOMIC_RELAXED);
    if (p->len + n > BUF_CAP) {
      rc = flushFrames(p);
      if (rc != SQLITE_OK) return rc;
      p->next = off + n;
      return writeThrough(p, z, n, off);
    }
    memcpy(p->buf + p->len, b, n);
    p->len += n;
    p->wantPage = 0;
    if (commit || p->len + FRAME_HEADER + n > BUF_CAP) return flushFrames(p);
    return SQLITE_OK;
  }
  /* Anything else (the WAL's header, a page written again in place, the
  ** checksums rewritten at a commit) goes after what is held, as SQLite
  ** wrote it. */
  rc = flushFrames(p);
  if (rc != SQLITE_OK) return rc;
  rc = writeThrough(p, z, n, off);
  if (rc != SQLITE_OK) return rc;
  if (off == 0 && n == WAL_HEADER) {
    p->next = WAL_HEADER; /* a new WAL: its frames follow */
  } else if (off == hdrEnd) {
    p->next = off + n; /* a frame written through: the next one follows */
  } else if (n == FRAME_HEADER) {
    p->hdrEnd = off + n; /* maybe a frame's header: see what follows */
  }
  return SQLITE_OK;
}

static int walRead(sqlite3_file *f, void *z, int n, sqlite3_int64 off) {
  walFile *p = (walFile *)f;
  int rc = flushFrames(p);
  if (rc != SQLITE_OK) return rc;
  return p->real->pMethods->xRead(p->real, z, n, off);
}

static int walClose(sqlite3_file *f) {
  walFile *p = (walFile *)f;
  int rc = flushFrames(p);
  int rc2 = p->real->pMethods->xClose(p->real);
  free(p->buf);
  p->buf = 0;
  return rc != SQLITE_OK ? rc : rc2;
}

static int walTruncate(sqlite3_file *f, sqlite3_int64 size) {
  walFile *p = (walFile *)f;
  int rc = flushFrames(p);
  if (rc != SQLITE_OK) return rc;
  if (p->next > size) p->next = -1;
  return p->real->pMethods->xTruncate(p->real, size);
}

static int walSync(sqlite3_file *f, int flags) {
  walFile *p = (walFile *)f;
  int rc = flushFrames(p);
  if (rc != SQLITE_OK) return rc;
  return p->real->pMethods->xSync(p->real, flags);
}

static int walFileSize(sqlite3_file *f, sqlite3_int64 *size) {
  walFile *p = (walFile *)f;
  int rc = flushFrames(p);
  if (rc != SQLITE_OK) return rc;
  return p->real->pMethods->xFileSize(p->real, size);
}

static int walLock(sqlite3_file *f, int level) {
  walFile *p = (walFile *)f;
  int rc = flushFrames(p);
  if (rc != SQLITE_OK) return rc;
  return p->real->pMethods->xLock(p->real, level);
}

static int walUnlock(sqlite3_file *f, int level) {
  walFile *p = (walFile *)f;
  int rc = flushFrames(p);
  if (rc != SQLITE_OK) return rc;
  return p->real->pMethods->xUnlock(p->real, level);
}

static int walCheckReservedLock(sqlite3_file *f, int *out) {
  walFile *p = (walFile *)f;
  return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int walFileControl(sqlite3_file *f, int op, void *arg) {
  walFile *p = (walFile *)f;
  int rc = flushFrames(p);
  if (rc != SQLITE_OK) return rc;
  return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int walSectorSize(sqlite3_file *f) {
  walFile *p = (walFile *)f;
  return p->real->pMethods->xSectorSize(p->real);
}

static int walDeviceCharacteristics(sqlite3_file *f) {
  walFile *p = (walFile *)f;
  return p->real->pMethods->xDeviceCharacteristics(p->real);
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
    walLock,
    walUnlock,
    walCheckReservedLock,
    walFileControl,
    walSectorSize,
    walDeviceCharacteristics,
};

static int shimOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f,
                    int flags, int *outFlags) {
  walFile *p = (walFile *)f;
  int rc;
  (void)vfs;
  if ((flags & SQLITE_OPEN_WAL) == 0) return orig->xOpen(orig, name, f, flags, outFlags);
  memset(p, 0, sizeof(*p));
  p->real = (sqlite3_file *)&p[1];
  p->next = -1;
  p->hdrEnd = -1;
  rc = orig->xOpen(orig, name, p->real, flags, outFlags);
  /* SQLite closes a file whose methods are set, even after a failure. */
  p->base.pMethods = p->real->pMethods ? &walMethods : 0;
  return rc;
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
  if (orig != 0) return SQLITE_OK;
  base = sqlite3_vfs_find(0);
  if (base == 0 || base->iVersion < 2) return SQLITE_IOERR;
  orig = base;
  shim.szOsFile = (int)sizeof(walFile) + base->szOsFile;
  shim.mxPathname = base->mxPathname;
  return sqlite3_vfs_register(&shim, 0);
}

void albedo_walvfs_stats(unsigned long long *frames, unsigned long long *writes) {
  *frames = __atomic_load_n(&statFrames, __ATOMIC_RELAXED);
  *writes = __atomic_load_n(&statWrites, __ATOMIC_RELAXED);
}
