DROP TABLE cluster;
