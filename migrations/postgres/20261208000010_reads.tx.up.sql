-- Read markers: the offset each person (a member, a guest, by their
-- author id) has read up to in each session (db/reads.go).
CREATE TABLE reads (
    reader   TEXT NOT NULL,
    session  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    "offset" BIGINT NOT NULL,
    PRIMARY KEY (reader, session)
);

--bun:split

CREATE INDEX reads_session ON reads (session);
