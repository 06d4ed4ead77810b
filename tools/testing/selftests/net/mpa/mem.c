// SPDX-License-Identifier: GPL-2.0
/*
 * What a kernel consumer in the memory reclaim path needs (mpa.rst,
 * "Memory"):
 *
 *   workqueue     the connections' work runs on mpa's own WQ_MEM_RECLAIM
 *                 workqueue: its rescuer thread, kworker/R-mpa, exists
 *
 * Run as root.
 */
#include <dirent.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

/* What the workqueue check looks for in /proc: the rescuer's name. */
static bool m_task_named(const char *name)
{
	char path[300], comm[64];
	struct dirent *de;
	bool found = false;
	DIR *d;
	FILE *f;

	d = opendir("/proc");
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = 0;
			found = !strcmp(comm, name);
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

/*
 * The connections' work must make progress while the system reclaims
 * memory (a storage consumer's socket writes back dirty pages): mpa has a
 * workqueue of its own with WQ_MEM_RECLAIM, so a rescuer thread.
 */
TEST(workqueue)
{
	ASSERT_EQ(0, system("modprobe mpa"));
	EXPECT_TRUE(m_task_named("kworker/R-mpa"))
		TH_LOG("no rescuer thread kworker/R-mpa: no WQ_MEM_RECLAIM workqueue of mpa's own");
}

TEST_HARNESS_MAIN
