DROP TABLE reads;
