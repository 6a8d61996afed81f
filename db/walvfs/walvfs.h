#ifndef ALBEDO_WALVFS_H
#define ALBEDO_WALVFS_H

#define ALBEDO_WALVFS_NAME "albedo-wal"

int albedo_walvfs_register(void);
void albedo_walvfs_stats(unsigned long long *frames, unsigned long long *writes);
void albedo_walvfs_fail_flushes(int n);

#endif
