DROP TABLE blob_refs;
DROP TABLE blob_uploaders;
DROP TABLE blobs;
DROP TABLE blob_chunks;
DROP TABLE blob_uploads;
