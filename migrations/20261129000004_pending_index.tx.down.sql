DROP INDEX inputs_pending;

--bun:split

CREATE INDEX inputs_delivery ON inputs (session, delivery, ord);
