// SPDX-License-Identifier: GPL-2.0
/*
 * icount: a QEMU TCG plugin that counts the guest instructions each vCPU
 * executes, per translation block, between two executions of one guest
 * address (tools/testing/bench/icount.sh).
 *
 * Under TCG the time a guest takes for some code moves with the host's
 * load and with how QEMU happens to run it, so timed profiles of small
 * differences are noisy; the instructions executed are not. The window is
 * opened by the first execution of the block at start=ADDR (a kernel
 * function the measured program calls right before its work, ksys_sync()
 * for mpabench -X: nothing in the test guest calls sync() before it) and
 * closed by the second. At exit, outfile=PATH gets "# marks N" (the
 * executions of ADDR's block seen, up to 2: 2 when the window closed),
 * "# pauses P0 P1 PX" (the PAUSE instructions vCPU 0, vCPU 1 and any
 * other vCPUs executed in the window, see pauses[] below), "# ticks N NS"
 * (the time samples taken in the window and the host nanoseconds it
 * lasted, see sampler() below), and for every block executed or sampled
 * in the window one line:
 *
 *	VADDR INSNS RUNS_VCPU0 RUNS_VCPU1 RUNS_OTHERS SAMPLES_VCPU0 SAMPLES_VCPU1
 *
 * VADDR the block's guest virtual address (hex), INSNS its instructions,
 * RUNS_* how often vCPU 0, vCPU 1 and the other vCPUs (a guest of more
 * than two) ran it, SAMPLES_* how many time samples found vCPU 0 and
 * vCPU 1 in it. A block left early (an interrupt, a fault) still counts
 * whole: the error is small beside the totals.
 *
 * The samples tell where the time goes, which the instructions alone do
 * not: under TCG an instruction's cost varies widely (a memory access that
 * misses QEMU's software TLB, an atomic, each iteration of a string
 * instruction), so two paths of equal counts can take different times. A
 * host thread looks every period=NS nanoseconds (default 100000) at the
 * block each vCPU last entered; a vCPU that halted, or is in QEMU's own
 * code (a device, an interrupt), counts in the block it entered last, and
 * so does time its thread waited for a host CPU: the samples measure the
 * host's wall time, which the guest's 2 vCPUs share with QEMU's own
 * threads and this one.
 *
 * Only plugin API version 1 (QEMU 7.2, Debian 12's) is used, declared
 * here, so that no QEMU development package is needed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define ICOUNT_EXPORT __attribute__((visibility("default")))
/* vCPUs 0 and 1 apart, any others (a guest of more) together */
#define ICOUNT_SLOTS 3

/* QEMU's plugin API, version 1 (include/qemu/qemu-plugin.h of QEMU 7.2) */
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata);

ICOUNT_EXPORT int qemu_plugin_version = 1;

/* One translation of a block (a block translated again gets another) */
struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t runs[ICOUNT_SLOTS];
	uint64_t samples[2];
	struct block *next;
};

static struct block *blocks;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static char outfile[4096];
static uint64_t start_addr;
static int marks;		/* executions of start_addr's block so far */
static volatile int counting;
/*
 * PAUSE (spin-wait loops: contended spinlocks, waits on another CPU):
 * under TCG each one leaves the translated code for QEMU's main loop, so
 * it costs far more time than its count among the instructions says.
 */
static uint64_t pauses[ICOUNT_SLOTS];
/* the block vCPU 0 and vCPU 1 entered last, for the sampler */
static struct block *volatile current[2];
static uint64_t period_ns = 100000;
static uint64_t ticks, window_ns;

static unsigned int slot(unsigned int vcpu)
{
	return vcpu < ICOUNT_SLOTS - 1 ? vcpu : ICOUNT_SLOTS - 1;
}

static void block_run(unsigned int vcpu, void *data)
{
	struct block *b = data;

	/* the other vCPU's thread may count the same block: nearly right */
	if (counting)
		b->runs[slot(vcpu)]++;
	if (vcpu < 2)
		current[vcpu] = b;
}

static void pause_run(unsigned int vcpu, void *data)
{
	if (counting)
		pauses[slot(vcpu)]++;
}

static void mark_run(unsigned int vcpu, void *data)
{
	pthread_mutex_lock(&blocks_lock);
	if (marks < 2)
		counting = ++marks == 1;
	pthread_mutex_unlock(&blocks_lock);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Every period_ns, while the window is open: the block each vCPU is in.
 * Absolute wake-up times and no timer slack keep the period near the one
 * asked for; the report divides by the measured one anyway.
 */
static void *sampler(void *arg)
{
	uint64_t opened = 0, next = now_ns(), t;
	struct timespec ts;
	unsigned int v;

	prctl(PR_SET_TIMERSLACK, 1UL);
	for (;;) {
		t = now_ns();
		/* late (the host was busy): no burst to catch up */
		next = next + period_ns > t ? next + period_ns : t + period_ns;
		ts.tv_sec = next / 1000000000ull;
		ts.tv_nsec = next % 1000000000ull;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
			;
		if (!counting) {
			if (marks >= 2) {
				if (opened)
					window_ns = now_ns() - opened;
				return NULL;
			}
			continue;
		}
		if (!opened)
			opened = now_ns();
		ticks++;
		for (v = 0; v < 2; v++) {
			struct block *b = current[v];

			if (b)
				b->samples[v]++;
		}
	}
}

static void block_translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = calloc(1, sizeof(*b));
	size_t i;

	if (!b)
		abort();
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = qemu_plugin_tb_n_insns(tb);
	pthread_mutex_lock(&blocks_lock);
	b->next = blocks;
	blocks = b;
	pthread_mutex_unlock(&blocks_lock);
	if (b->vaddr == start_addr)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, mark_run,
						     QEMU_PLUGIN_CB_NO_REGS, b);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_run,
					     QEMU_PLUGIN_CB_NO_REGS, b);
	for (i = 0; i < b->insns; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const unsigned char *op = qemu_plugin_insn_data(insn);

		if (qemu_plugin_insn_size(insn) == 2 && op[0] == 0xf3 &&
		    op[1] == 0x90)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, pause_run,
							       QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
	}
}

static void write_counts(qemu_plugin_id_t id, void *data)
{
	FILE *f = fopen(outfile, "w");
	struct block *b;

	if (!f) {
		perror(outfile);
		return;
	}
	fprintf(f, "# marks %d\n", marks);
	fprintf(f, "# pauses %llu %llu %llu\n", (unsigned long long)pauses[0],
		(unsigned long long)pauses[1], (unsigned long long)pauses[2]);
	fprintf(f, "# ticks %llu %llu\n", (unsigned long long)ticks,
		(unsigned long long)window_ns);
	for (b = blocks; b; b = b->next)
		if (b->runs[0] || b->runs[1] || b->runs[2] || b->samples[0] ||
		    b->samples[1])
			fprintf(f, "%llx %llu %llu %llu %llu %llu %llu\n",
				(unsigned long long)b->vaddr,
				(unsigned long long)b->insns,
				(unsigned long long)b->runs[0],
				(unsigned long long)b->runs[1],
				(unsigned long long)b->runs[2],
				(unsigned long long)b->samples[0],
				(unsigned long long)b->samples[1]);
	fclose(f);
}

ICOUNT_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
				      const qemu_info_t *info, int argc,
				      char **argv)
{
	pthread_t thr;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "outfile=", 8))
			snprintf(outfile, sizeof(outfile), "%s", argv[i] + 8);
		else if (!strncmp(argv[i], "start=", 6))
			start_addr = strtoull(argv[i] + 6, NULL, 16);
		else if (!strncmp(argv[i], "period=", 7))
			period_ns = strtoull(argv[i] + 7, NULL, 10);
	}
	if (!period_ns) {
		fprintf(stderr, "icount: period=0: no samples\n");
		return -1;
	}
	if (!outfile[0] || !start_addr) {
		fprintf(stderr, "icount: needs outfile=PATH and start=ADDR\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, block_translated);
	qemu_plugin_register_atexit_cb(id, write_counts, NULL);
	if (pthread_create(&thr, NULL, sampler, NULL))
		return -1;
	pthread_detach(thr);
	return 0;
}
