DROP VIEW sessions_now;
