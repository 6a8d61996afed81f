-- Only inputs whose turn has not ended are ever looked up by delivery (the
-- daemon's start: repair and re-queue). A partial index holds just those:
-- a bot's post (delivered at once) never enters it, an input leaves it when
-- its turn ends, and the start reads the pending ones without scanning
-- every input ever sent. The full index cost each post a B-tree page per
-- commit (see docs/benchmarks.md).
DROP INDEX inputs_delivery;

--bun:split

CREATE INDEX inputs_pending ON inputs (session, ord) WHERE delivery IN ('queued', 'running');
