DROP TABLE usage;
