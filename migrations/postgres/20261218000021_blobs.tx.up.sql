-- Files (db/blobs.go): blobs stored by their sha256, their bytes in
-- chunks. An upload writes its chunks under an upload id of its own
-- (blob_uploads), then, once the bytes hash as named, the blob's row in
-- the same transaction as the upload's row goes: a blob is whole or
-- absent, and chunks of an upload a crash cut short are swept.
CREATE TABLE blob_uploads (
    upload     TEXT NOT NULL PRIMARY KEY,
    started_at TEXT NOT NULL
);
CREATE TABLE blob_chunks (
    upload TEXT NOT NULL,
    seq    BIGINT NOT NULL,
    data   BYTEA NOT NULL,
    PRIMARY KEY (upload, seq)
);
-- A file's chunks are stored as they are: compressing them (TOAST's
-- default) costs the upload and rarely pays (images, archives).
ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE TABLE blobs (
    sha256     TEXT NOT NULL PRIMARY KEY,
    upload     TEXT NOT NULL,
    size       BIGINT NOT NULL,
    mime       TEXT NOT NULL,
    chunk      BIGINT NOT NULL,
    created_at TEXT NOT NULL
);
-- Who uploaded a blob (an author id, or token:ID for a link): they may
-- read it before any message carries it.
CREATE TABLE blob_uploaders (
    sha256 TEXT NOT NULL,
    who    TEXT NOT NULL,
    PRIMARY KEY (sha256, who)
);
-- The sessions whose log carries a blob, from the offset of the first
-- event that does: whoever may read one of them may read the blob. A
-- fork takes its parent's up to its fork point.
CREATE TABLE blob_refs (
    session  TEXT NOT NULL,
    sha256   TEXT NOT NULL,
    "offset" BIGINT NOT NULL,
    PRIMARY KEY (session, sha256)
);
CREATE INDEX blob_refs_by_blob ON blob_refs (sha256);
