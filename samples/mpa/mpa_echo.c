// SPDX-License-Identifier: GPL-2.0
/*
 * mpa_echo: a sample in-kernel MPA consumer (include/net/mpa.h).
 *
 * A kernel-side MPA service. It listens on TCP port @port, IPv4 and IPv6,
 * runs the Responder side of every connection it accepts through the
 * in-kernel API and then either echoes each ULPDU back (placed straight
 * from TCP's receive queue into pages of its own, which go back out
 * without another copy) or sinks it (counting ULPDUs, octets and a CRC32c
 * of the ULPDU stream). It can also connect out as the Initiator, send
 * ULPDUs and check what the peer sends back.
 *
 * Its parameters (modinfo mpa_echo) pick what the Responder asks for
 * (Markers, CRC, Rev 2 IRD/ORD and RTR types), whether it rejects, answers
 * the Request late from a work item, or is a slow consumer that refuses
 * each ULPDU once and takes it later (back-pressure through -EAGAIN and
 * mpa_kresume()). A Responder can also greet the Initiator: send ULPDUs
 * of its own as soon as the connection is established, which MPA holds
 * until the Initiator's first FPDU (R-7.1.2-15), until mpa_ksend() says
 * the send buffer is full. With noio=1 it does what a consumer in the
 * memory reclaim path (a storage target) must: its sockets allocate with
 * GFP_NOIO and do not use the task's page fragment. For example, with mpacat
 * (tools/mpacat/):
 *
 *   modprobe mpa_echo port=7175 markers=1
 *   echo hello | mpacat --markers 127.0.0.1 7175     # prints hello
 *   mpacat --markers -l 7174 &
 *   echo "127.0.0.1 7174 markers=1 sizes=5,64768" \
 *           > /sys/kernel/debug/mpa_echo/connect
 *   cat /sys/kernel/debug/mpa_echo/conns
 *
 * /sys/kernel/debug/mpa_echo/ has:
 *   conns    one line per connection: role, state, what was negotiated,
 *            the peer's Private Data, counters, the last error
 *   connect  write "ADDR PORT [key=value...]" to start an Initiator:
 *            markers=0|1 crc=0|1 rev=0|1|2 ird=N ord=N p2p=0|1 rtr=MASK
 *            pd=TEXT sizes=N,N,... repeat=N seed=N close=0|1 timeout=MS
 *            It sends the ULPDUs of @sizes (@repeat times over), ULPDU k
 *            filled by the selftests' t_fill(seed + k), expects each back
 *            unchanged and, with close=1 (the default), closes once all
 *            came back.
 *
 * Module unload with connections open detaches MPA from each and closes
 * it with a reset, then waits until TCP has let go of every page it sent.
 */
#include <linux/crc32c.h>
#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/mpa.h>
#include <net/sock.h>

static unsigned short port = 7175;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "TCP port to listen on, IPv4 and IPv6 (0: do not listen)");

static bool sink;
module_param(sink, bool, 0644);
MODULE_PARM_DESC(sink, "Responder: count and checksum ULPDUs instead of echoing them");

static bool markers;
module_param(markers, bool, 0644);
MODULE_PARM_DESC(markers, "Responder: ask for Markers in what we receive (M=1)");

static bool crc = true;
module_param(crc, bool, 0644);
MODULE_PARM_DESC(crc, "Responder: 0 announces C=0 (needs the netns policy crc-off-allowed)");

static bool reject;
module_param(reject, bool, 0644);
MODULE_PARM_DESC(reject, "Responder: reject every Request");

static char *accept_pd = "mpa_echo: welcome";
module_param(accept_pd, charp, 0444);
MODULE_PARM_DESC(accept_pd, "Private Data of an accepting Reply");

static char *reject_pd = "mpa_echo: rejected";
module_param(reject_pd, charp, 0444);
MODULE_PARM_DESC(reject_pd, "Private Data of a rejecting Reply");

static char *request_pd = "mpa_echo: hello";
module_param(request_pd, charp, 0444);
MODULE_PARM_DESC(request_pd, "Initiator: the Request's Private Data unless connect says pd=");

static unsigned int answer_ms;
module_param(answer_ms, uint, 0644);
MODULE_PARM_DESC(answer_ms, "Responder: answer the Request this late, from a work item (0: at once, from the callback)");

static unsigned int slow_ms;
module_param(slow_ms, uint, 0644);
MODULE_PARM_DESC(slow_ms, "A slow consumer: refuse each ULPDU first and take it this many ms later");

static unsigned int rcvbuf;
module_param(rcvbuf, uint, 0444);
MODULE_PARM_DESC(rcvbuf, "SO_RCVBUF of the listening sockets, so of accepted connections (0: TCP's)");

static unsigned int ird;
module_param(ird, uint, 0644);
MODULE_PARM_DESC(ird, "Responder: the IRD we offer for Rev 2");

static unsigned int ord;
module_param(ord, uint, 0644);
MODULE_PARM_DESC(ord, "Responder: the ORD we offer for Rev 2");

static unsigned int rtr = MPA_RTR_ALL;
module_param(rtr, uint, 0644);
MODULE_PARM_DESC(rtr, "Responder: the RTR types (MPA_RTR_* mask) we accept for Rev 2");

static unsigned int timeout_ms;
module_param(timeout_ms, uint, 0644);
MODULE_PARM_DESC(timeout_ms, "Startup timeout in ms (0: mpa's default)");

static bool odd_bvecs;
module_param(odd_bvecs, bool, 0644);
MODULE_PARM_DESC(odd_bvecs, "Place and send ULPDUs in bio_vecs at odd page offsets and lengths");

static bool inline_resume;
module_param(inline_resume, bool, 0644);
MODULE_PARM_DESC(inline_resume, "Responder: call mpa_kresume() from the writable callback itself rather than from a work item");

static unsigned int greet;
module_param(greet, uint, 0644);
MODULE_PARM_DESC(greet, "Responder: once established, send ULPDUs of this many octets (ULPDU k filled by t_fill(5000 + k)) until mpa_ksend() says -EAGAIN (0: do not)");

static bool greet_retry;
module_param(greet_retry, bool, 0644);
MODULE_PARM_DESC(greet_retry, "Responder: the writable callback greets again, from the ULPDU where the greeting stopped");

static unsigned int greet_max = 64 << 20;
module_param(greet_max, uint, 0644);
MODULE_PARM_DESC(greet_max, "Responder: greet with at most this many octets");

static bool keep_open;
module_param(keep_open, bool, 0644);
MODULE_PARM_DESC(keep_open, "Stay open when the peer closes its half (the closed callback), until an error");

static bool noio;
module_param(noio, bool, 0644);
MODULE_PARM_DESC(noio, "Run as a consumer in the memory reclaim path: sk_allocation GFP_NOIO, no task page fragment");

/* Pages one ULPDU takes, at page offsets below 64 */
#define ECHO_MAX_BVECS	DIV_ROUND_UP(MPA_MAX_ULPDU, PAGE_SIZE - 64)
/* ULPDUs one Initiator sends at most */
#define ECHO_MAX_TX	100000
#define ECHO_MAX_SIZES	128
/* How long a graceful close waits for the peer to take what we sent */
#define ECHO_CLOSE_WAIT	(5 * HZ)
/* A greeting's ULPDU k is filled by t_fill(ECHO_GREET_SEED + k) */
#define ECHO_GREET_SEED	5000

enum echo_phase {
	ECHO_STARTUP,
	ECHO_FULL,
	ECHO_REJECTED,
	ECHO_FAILED,
};

static const char * const echo_phase_names[] = {
	[ECHO_STARTUP] = "startup",
	[ECHO_FULL] = "full",
	[ECHO_REJECTED] = "rejected",
	[ECHO_FAILED] = "failed",
};

/**
 * struct echo_conn - one connection of the service
 * @list: in echo_conns
 * @id: its number, from 1, in the order connections were made
 * @role: MPA_ROLE_INITIATOR or MPA_ROLE_RESPONDER
 * @sink: Responder: count ULPDUs rather than echo them
 * @odd: place ULPDUs in bio_vecs at odd offsets
 * @inline_resume: resume from the writable callback itself
 * @slow_ms: refuse each ULPDU once and take it this much later
 * @gfp: allocation flags of our own pages (GFP_NOIO with noio)
 * @greet: Responder: the size of the greeting's ULPDUs, 0 for none
 * @greet_max: Responder: octets the greeting sends at most
 * @greet_retry: Responder: the writable callback greets again
 * @answer_ms: Responder: answer the Request this late
 * @reject: Responder: reject the Request
 * @peer: the peer's address
 * @mu: serialises @sock and @c: attaching, our calls into MPA from work
 *	items, detaching. Never taken by an MPA callback.
 * @sock: the TCP socket, NULL once released
 * @c: the MPA connection, NULL once detached
 * @lock: the fields below, read by debugfs
 * @dying: no more work may be queued
 * @phase: enum echo_phase
 * @peer_closed: the peer closed its half (the closed callback)
 * @released: we closed the socket
 * @have_res: @res is valid
 * @res: what was negotiated (mpa_kresult())
 * @mulpdu: the MULPDU last seen (mpa_kmulpdu())
 * @frame: the peer's Request or Reply
 * @err: the last error the error callback told of
 * @errors: how often the error callback ran
 * @kerr: the errno of the last of our calls into MPA that failed
 * @pd: the peer's Private Data
 * @pd_len: its length
 * @rx_ulpdus: ULPDUs taken
 * @rx_octets: their octets
 * @rx_crc: CRC32c register over them (sink and Initiator), from ~0
 * @tx_ulpdus: ULPDUs sent (mpa_ksend() took them)
 * @tx_octets: their octets
 * @refused: ULPDUs we left queued (-EAGAIN from the ulpdu callback)
 * @resumes: mpa_kresume() calls
 * @send_eagain: mpa_ksend() said -EAGAIN
 * @send_epipe: mpa_ksend() said -EPIPE
 * @writable: the writable callback ran: room again, or a send no longer
 *	waits (a hold that never ends: mpa_ksend() fails at once)
 * @greeted: Responder: ULPDUs of the greeting sent
 * @greet_runs: Responder: greetings that ended (the first, and retries)
 * @verified: Initiator: ULPDUs that came back unchanged
 * @bad: Initiator: ULPDUs that came back different
 * @take_next: slow consumer: the next ULPDU may be taken
 * @tx_done: zero-copy sends completed
 * @inflight: zero-copy sends not completed yet
 * @sizes: Initiator: ULPDU sizes, repeated
 * @nr_sizes: how many
 * @total: Initiator: ULPDUs to send
 * @seed: Initiator: ULPDU k is t_fill(seed + k)
 * @next_tx: Initiator: the next ULPDU to send
 * @close_when_done: Initiator: close once every ULPDU came back
 * @buf: room for one ULPDU (sink, Initiator)
 * @exp: Initiator: what a ULPDU that came back should hold
 * @txbuf: Initiator: the ULPDU being sent, before it goes into pages
 * @answer_work: answers the Request late
 * @resume_work: slow consumer: takes a refused ULPDU (mpa_kresume())
 * @room_work: takes a ULPDU refused for want of room to echo it
 * @send_work: Initiator: sends the ULPDUs
 * @greet_work: Responder: sends the greeting
 * @close_work: detaches and closes
 */
struct echo_conn {
	struct list_head list;
	unsigned int id;
	u32 role;
	bool sink;
	bool odd;
	bool inline_resume;
	unsigned int slow_ms;
	gfp_t gfp;
	u32 greet;
	u32 greet_max;
	bool greet_retry;
	unsigned int answer_ms;
	bool reject;
	struct sockaddr_storage peer;

	struct mutex mu;		/* see above */
	struct socket *sock;
	struct mpa_conn *c;

	spinlock_t lock;		/* see above */
	bool dying;
	enum echo_phase phase;
	bool peer_closed;
	bool released;
	bool have_res;
	u32 errors;
	struct mpa_result res;
	u32 mulpdu;
	struct mpa_frame_info frame;
	struct mpa_error_info err;
	int kerr;
	u8 pd[MPA_MAX_PRIVATE_DATA];
	u32 pd_len;
	u64 rx_ulpdus;
	u64 rx_octets;
	u32 rx_crc;
	u64 tx_ulpdus;
	u64 tx_octets;
	u64 refused;
	u64 resumes;
	u64 send_eagain;
	u64 send_epipe;
	u64 writable;
	u64 greeted;
	u64 greet_runs;
	u64 verified;
	u64 bad;
	bool take_next;
	atomic64_t tx_done;
	atomic_t inflight;

	u32 *sizes;
	u32 nr_sizes;
	u32 total;
	u64 seed;
	u32 next_tx;
	bool close_when_done;
	u8 *buf;
	u8 *exp;
	u8 *txbuf;

	struct delayed_work answer_work;
	struct delayed_work resume_work;
	struct delayed_work send_work;
	struct work_struct greet_work;
	struct work_struct room_work;
	struct work_struct close_work;
};

/**
 * struct echo_tx - one ULPDU sent from our pages
 * @ktx: MPA's completion; ours to keep alive until @ktx.done ran
 * @ec: the connection
 * @nr: pages in @bv
 * @bv: the pages, each with a reference of ours
 */
struct echo_tx {
	struct mpa_ktx ktx;
	struct echo_conn *ec;
	unsigned int nr;
	struct bio_vec bv[ECHO_MAX_BVECS];
};

struct echo_listener {
	struct socket *sock;
	struct task_struct *thread;
};

static struct workqueue_struct *echo_workq;
static DEFINE_MUTEX(echo_mutex);	/* echo_conns, echo_next_id */
static LIST_HEAD(echo_conns);
static unsigned int echo_next_id;
static struct echo_listener echo_listeners[2];
static struct dentry *echo_dir;
/* Zero-copy sends not completed yet, over all connections */
static atomic_t echo_inflight = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(echo_waitq);

/* Work that dies with the connection: never queued once it is dying. */
static void echo_queue(struct echo_conn *ec, struct work_struct *w)
{
	spin_lock(&ec->lock);
	if (!ec->dying)
		queue_work(echo_workq, w);
	spin_unlock(&ec->lock);
}

static void echo_queue_delayed(struct echo_conn *ec, struct delayed_work *dw,
			       unsigned int ms)
{
	spin_lock(&ec->lock);
	if (!ec->dying)
		queue_delayed_work(echo_workq, dw, msecs_to_jiffies(ms));
	spin_unlock(&ec->lock);
}

/* The selftests' t_fill(): @n octets that depend on @seed only. */
static u64 echo_rand64(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void echo_fill(u8 *b, size_t n, u64 seed)
{
	u64 s = seed * 0x2545f4914f6cdd1dull + 1, v;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		v = echo_rand64(&s);
		memcpy(b + i, &v, 8);
	}
	if (i < n) {
		v = echo_rand64(&s);
		memcpy(b + i, &v, n - i);
	}
}

static u32 echo_size(const struct echo_conn *ec, u32 k)
{
	return ec->sizes[k % ec->nr_sizes];
}

/* Sends and transmit completions */

static void echo_tx_free(struct echo_tx *tx)
{
	unsigned int i;

	for (i = 0; i < tx->nr; i++)
		put_page(tx->bv[i].bv_page);
	kfree(tx);
}

/* Pages for a ULPDU of @len, in bio_vecs; NULL without memory. */
static struct echo_tx *echo_tx_alloc(struct echo_conn *ec, u32 len)
{
	struct echo_tx *tx;
	u32 left = len;

	tx = kzalloc(sizeof(*tx), ec->gfp);
	if (!tx)
		return NULL;
	tx->ec = ec;
	while (left) {
		unsigned int off = ec->odd ? (tx->nr * 7 + 1) % 64 : 0;
		struct page *page = alloc_page(ec->gfp);
		u32 n = min_t(u32, left, PAGE_SIZE - off);

		if (!page) {
			echo_tx_free(tx);
			return NULL;
		}
		bvec_set_page(&tx->bv[tx->nr++], page, n, off);
		left -= n;
	}
	return tx;
}

/* One send less in flight; @ec may be freed once the last one is done. */
static void echo_inflight_put(struct echo_conn *ec)
{
	if (atomic_dec_and_test(&ec->inflight))
		wake_up_all(&echo_waitq);
	if (atomic_dec_and_test(&echo_inflight))
		wake_up_all(&echo_waitq);
}

/*
 * TCP let go of the pages: any context, softirq included. The RCU read
 * section lets module unload wait for the last of these to return.
 */
static void echo_tx_done(struct mpa_ktx *ktx)
{
	struct echo_tx *tx = container_of(ktx, struct echo_tx, ktx);
	struct echo_conn *ec = tx->ec;

	rcu_read_lock();
	echo_tx_free(tx);
	atomic64_inc(&ec->tx_done);
	echo_inflight_put(ec);
	rcu_read_unlock();
}

/* Hand @tx to MPA: 0, or its error and @tx is still ours. */
static int echo_tx_send(struct echo_conn *ec, struct mpa_conn *c,
			struct echo_tx *tx, u32 len)
{
	int ret;

	tx->ktx.done = echo_tx_done;
	atomic_inc(&echo_inflight);
	atomic_inc(&ec->inflight);
	ret = mpa_ksend(c, tx->bv, tx->nr, len, &tx->ktx);
	if (ret) {
		echo_inflight_put(ec);
		spin_lock(&ec->lock);
		if (ret == -EAGAIN)
			ec->send_eagain++;
		else
			ec->kerr = ret;
		if (ret == -EPIPE)
			ec->send_epipe++;
		spin_unlock(&ec->lock);
		return ret;
	}
	spin_lock(&ec->lock);
	ec->tx_ulpdus++;
	ec->tx_octets += len;
	spin_unlock(&ec->lock);
	return 0;
}

/* Fill @tx's pages with @len octets of echo_fill(@seed), via ec->txbuf. */
static void echo_tx_fill(struct echo_conn *ec, struct echo_tx *tx, u32 len,
			 u64 seed)
{
	unsigned int i;
	u32 o;

	echo_fill(ec->txbuf, len, seed);
	for (i = 0, o = 0; i < tx->nr; i++) {
		struct bio_vec *bv = &tx->bv[i];

		memcpy(page_address(bv->bv_page) + bv->bv_offset,
		       ec->txbuf + o, bv->bv_len);
		o += bv->bv_len;
	}
}

/* Initiator: send the ULPDUs, as far as MPA takes them now. */
static void echo_send_work(struct work_struct *w)
{
	struct echo_conn *ec = container_of(to_delayed_work(w),
					    struct echo_conn, send_work);
	struct echo_tx *tx;
	u32 len;
	int ret;

	mutex_lock(&ec->mu);
	while (ec->c && !READ_ONCE(ec->dying) && ec->next_tx < ec->total) {
		len = echo_size(ec, ec->next_tx);
		tx = echo_tx_alloc(ec, len);
		if (!tx) {
			echo_queue_delayed(ec, &ec->send_work, 10);
			break;
		}
		echo_tx_fill(ec, tx, len, ec->seed + ec->next_tx);
		ret = echo_tx_send(ec, ec->c, tx, len);
		if (ret) {
			echo_tx_free(tx);
			/* no room: the writable callback brings us back */
			if (ret == -ENOMEM)
				echo_queue_delayed(ec, &ec->send_work, 10);
			break;
		}
		ec->next_tx++;
	}
	mutex_unlock(&ec->mu);
}

/*
 * Responder: greet the Initiator with ULPDUs of our own before it sent
 * anything. MPA holds them (R-7.1.2-15), charged to the send buffer, until
 * mpa_ksend() says it is full; we stop there (or at greet_max octets). With
 * greet_retry the writable callback starts the greeting again.
 */
static void echo_greet_work(struct work_struct *w)
{
	struct echo_conn *ec = container_of(w, struct echo_conn, greet_work);
	struct echo_tx *tx;
	u64 sent = 0, k;
	int ret;

	mutex_lock(&ec->mu);
	k = ec->greeted;	/* a retry goes on from there */
	while (ec->c && !READ_ONCE(ec->dying) &&
	       sent + ec->greet <= ec->greet_max) {
		tx = echo_tx_alloc(ec, ec->greet);
		if (!tx) {
			spin_lock(&ec->lock);
			ec->kerr = -ENOMEM;
			spin_unlock(&ec->lock);
			break;
		}
		echo_tx_fill(ec, tx, ec->greet, ECHO_GREET_SEED + k);
		ret = echo_tx_send(ec, ec->c, tx, ec->greet);
		if (ret) {
			/* -EAGAIN: the send buffer is full; the greeting ends */
			echo_tx_free(tx);
			break;
		}
		sent += ec->greet;
		k++;
		spin_lock(&ec->lock);
		ec->greeted = k;
		spin_unlock(&ec->lock);
	}
	spin_lock(&ec->lock);
	ec->greet_runs++;
	spin_unlock(&ec->lock);
	mutex_unlock(&ec->mu);
}

/* Closing */

/*
 * Detach MPA and release the socket; with @abort the socket closes with a
 * reset, so that TCP frees what it still holds of our pages at once.
 */
static void echo_teardown(struct echo_conn *ec, bool abort)
{
	spin_lock(&ec->lock);
	ec->dying = true;
	spin_unlock(&ec->lock);
	wake_up_all(&echo_waitq);
	cancel_delayed_work_sync(&ec->answer_work);
	cancel_delayed_work_sync(&ec->resume_work);
	cancel_delayed_work_sync(&ec->send_work);
	cancel_work_sync(&ec->greet_work);
	cancel_work_sync(&ec->room_work);

	mutex_lock(&ec->mu);
	if (ec->c) {
		mpa_kdetach(ec->c);
		ec->c = NULL;
	}
	if (ec->sock) {
		if (abort)
			sock_no_linger(ec->sock->sk);
		sock_release(ec->sock);
		ec->sock = NULL;
		spin_lock(&ec->lock);
		ec->released = true;
		spin_unlock(&ec->lock);
	}
	mutex_unlock(&ec->mu);
}

/*
 * A graceful close: give the peer a moment to take what we sent (our
 * pages stay in TCP until it acknowledged them), then close with a FIN.
 */
static void echo_close_work(struct work_struct *w)
{
	struct echo_conn *ec = container_of(w, struct echo_conn, close_work);

	wait_event_timeout(echo_waitq, !atomic_read(&ec->inflight) ||
			   READ_ONCE(ec->dying), ECHO_CLOSE_WAIT);
	echo_teardown(ec, false);
}

/* The Responder's answer */

static void echo_answer(struct echo_conn *ec, struct mpa_conn *c)
{
	int ret;

	if (ec->reject) {
		ret = mpa_kreject(c, reject_pd, strlen(reject_pd));
		spin_lock(&ec->lock);
		if (ret)
			ec->kerr = ret;
		else
			ec->phase = ECHO_REJECTED;
		spin_unlock(&ec->lock);
		/* MPA is left; the plain stream is of no use to us */
		echo_queue(ec, &ec->close_work);
		return;
	}
	ret = mpa_kaccept(c, accept_pd, strlen(accept_pd));
	if (ret) {
		spin_lock(&ec->lock);
		ec->kerr = ret;
		spin_unlock(&ec->lock);
		echo_queue(ec, &ec->close_work);
	}
}

static void echo_answer_work(struct work_struct *w)
{
	struct echo_conn *ec = container_of(to_delayed_work(w),
					    struct echo_conn, answer_work);

	mutex_lock(&ec->mu);
	if (ec->c && !READ_ONCE(ec->dying))
		echo_answer(ec, ec->c);
	mutex_unlock(&ec->mu);
}

/* Slow consumer: take the ULPDU we refused. */
static void echo_resume_work(struct work_struct *w)
{
	struct echo_conn *ec = container_of(to_delayed_work(w),
					    struct echo_conn, resume_work);

	mutex_lock(&ec->mu);
	if (ec->c && !READ_ONCE(ec->dying)) {
		spin_lock(&ec->lock);
		ec->take_next = true;
		ec->resumes++;
		spin_unlock(&ec->lock);
		mpa_kresume(ec->c);
	}
	mutex_unlock(&ec->mu);
}

/*
 * Room to echo again: take the ULPDU we left queued. (From a work item:
 * mpa_kresume() from inside a callback only takes effect with the next
 * delivery.)
 */
static void echo_room_work(struct work_struct *w)
{
	struct echo_conn *ec = container_of(w, struct echo_conn, room_work);

	mutex_lock(&ec->mu);
	if (ec->c && !READ_ONCE(ec->dying))
		mpa_kresume(ec->c);
	mutex_unlock(&ec->mu);
}

/* MPA's callbacks: process context, the socket locked */

static void echo_save_pd(struct echo_conn *ec,
			 const struct mpa_frame_info *fi, const void *pd,
			 u32 pd_len)
{
	spin_lock(&ec->lock);
	ec->frame = *fi;
	ec->pd_len = min_t(u32, pd_len, sizeof(ec->pd));
	if (ec->pd_len)
		memcpy(ec->pd, pd, ec->pd_len);
	spin_unlock(&ec->lock);
}

static void echo_request(struct mpa_conn *c, void *priv,
			 const struct mpa_frame_info *req, const void *pd,
			 u32 pd_len)
{
	struct echo_conn *ec = priv;

	echo_save_pd(ec, req, pd, pd_len);
	if (ec->answer_ms)
		echo_queue_delayed(ec, &ec->answer_work, ec->answer_ms);
	else
		echo_answer(ec, c);
}

static void echo_reply(struct mpa_conn *c, void *priv,
		       const struct mpa_frame_info *rep, const void *pd,
		       u32 pd_len)
{
	struct echo_conn *ec = priv;

	echo_save_pd(ec, rep, pd, pd_len);
	if (rep->flags & MPA_FRAME_REJECT) {
		spin_lock(&ec->lock);
		ec->phase = ECHO_REJECTED;
		spin_unlock(&ec->lock);
		echo_queue(ec, &ec->close_work);
	}
}

static void echo_established(struct mpa_conn *c, void *priv)
{
	struct echo_conn *ec = priv;
	struct mpa_result res;
	int ret;

	ret = mpa_kresult(c, &res);
	spin_lock(&ec->lock);
	ec->phase = ECHO_FULL;
	if (!ret) {
		ec->res = res;
		ec->have_res = true;
	} else {
		ec->kerr = ret;
	}
	ec->mulpdu = mpa_kmulpdu(c);
	spin_unlock(&ec->lock);
	if (ec->role == MPA_ROLE_INITIATOR)
		echo_queue_delayed(ec, &ec->send_work, 0);
	else if (ec->greet)
		echo_queue(ec, &ec->greet_work);
}

/* Place the ULPDU in @buf (sink, Initiator). */
static int echo_take_flat(struct echo_conn *ec, struct mpa_ulpdu *u)
{
	struct kvec kv = { .iov_base = ec->buf, .iov_len = u->len };
	struct iov_iter to;

	iov_iter_kvec(&to, ITER_DEST, &kv, 1, u->len);
	return mpa_ulpdu_copy(u, 0, &to, u->len);
}

/* Echo: place the ULPDU in pages of ours and send those back. */
static int echo_echo(struct echo_conn *ec, struct mpa_conn *c,
		     struct mpa_ulpdu *u)
{
	struct echo_tx *tx;
	struct iov_iter to;
	int ret;

	tx = echo_tx_alloc(ec, u->len);
	if (!tx)
		return -ENOMEM;
	iov_iter_bvec(&to, ITER_DEST, tx->bv, tx->nr, u->len);
	ret = mpa_ulpdu_copy(u, 0, &to, u->len);
	if (!ret)
		ret = echo_tx_send(ec, c, tx, u->len);
	if (ret)
		echo_tx_free(tx);
	return ret;
}

/* Initiator: the ULPDU must be what we sent as number rx_ulpdus. */
static int echo_check(struct echo_conn *ec, struct mpa_ulpdu *u)
{
	u64 k = ec->rx_ulpdus;
	bool good;
	int ret;

	ret = echo_take_flat(ec, u);
	if (ret)
		return ret;
	good = k < ec->total && u->len == echo_size(ec, k);
	if (good) {
		echo_fill(ec->exp, u->len, ec->seed + k);
		good = !memcmp(ec->exp, ec->buf, u->len);
	}
	spin_lock(&ec->lock);
	if (good)
		ec->verified++;
	else
		ec->bad++;
	spin_unlock(&ec->lock);
	return 0;
}

static int echo_ulpdu(struct mpa_conn *c, void *priv, struct mpa_ulpdu *u)
{
	struct echo_conn *ec = priv;
	bool done;
	u32 sum;
	int ret;

	if (ec->slow_ms && !READ_ONCE(ec->take_next)) {
		spin_lock(&ec->lock);
		ec->refused++;
		spin_unlock(&ec->lock);
		echo_queue_delayed(ec, &ec->resume_work, ec->slow_ms);
		return -EAGAIN;
	}
	if (ec->role == MPA_ROLE_INITIATOR)
		ret = echo_check(ec, u);
	else if (ec->sink)
		ret = echo_take_flat(ec, u);
	else
		ret = echo_echo(ec, c, u);
	if (ret == -EAGAIN || ret == -ENOMEM) {
		/*
		 * No room to echo it (the writable callback tells when
		 * there is), or no memory (try again soon): leave it queued.
		 */
		spin_lock(&ec->lock);
		ec->refused++;
		spin_unlock(&ec->lock);
		if (ret == -ENOMEM)
			echo_queue_delayed(ec, &ec->resume_work, 10);
		return -EAGAIN;
	}
	sum = ec->rx_crc;
	if (!ret && ec->buf)
		sum = crc32c(sum, ec->buf, u->len);
	spin_lock(&ec->lock);
	/* another error should not happen: the ULPDU is lost */
	if (ret)
		ec->kerr = ret;
	ec->rx_crc = sum;
	WRITE_ONCE(ec->take_next, false);
	ec->rx_ulpdus++;
	ec->rx_octets += u->len;
	ec->mulpdu = mpa_kmulpdu(c);
	done = ec->role == MPA_ROLE_INITIATOR && ec->close_when_done &&
	       ec->verified + ec->bad >= ec->total;
	spin_unlock(&ec->lock);
	if (done)
		echo_queue(ec, &ec->close_work);
	return 0;
}

static void echo_error(struct mpa_conn *c, void *priv,
		       const struct mpa_error_info *err)
{
	struct echo_conn *ec = priv;

	spin_lock(&ec->lock);
	ec->err = *err;
	ec->errors++;
	if (ec->phase == ECHO_STARTUP)
		ec->phase = ECHO_FAILED;
	spin_unlock(&ec->lock);
	echo_queue(ec, &ec->close_work);
}

static void echo_closed(struct mpa_conn *c, void *priv)
{
	struct echo_conn *ec = priv;

	spin_lock(&ec->lock);
	ec->peer_closed = true;
	spin_unlock(&ec->lock);
	if (!READ_ONCE(keep_open))
		echo_queue(ec, &ec->close_work);
}

static void echo_writable(struct mpa_conn *c, void *priv)
{
	struct echo_conn *ec = priv;

	spin_lock(&ec->lock);
	ec->writable++;
	spin_unlock(&ec->lock);
	if (ec->role == MPA_ROLE_INITIATOR)
		echo_queue_delayed(ec, &ec->send_work, 0);
	else if (ec->greet && ec->greet_retry)
		echo_queue(ec, &ec->greet_work);
	else if (ec->inline_resume)
		mpa_kresume(c);
	else
		echo_queue(ec, &ec->room_work);
}

static const struct mpa_kops echo_ops = {
	.request	= echo_request,
	.reply		= echo_reply,
	.established	= echo_established,
	.ulpdu		= echo_ulpdu,
	.error		= echo_error,
	.closed		= echo_closed,
	.writable	= echo_writable,
};

/* Connections */

/**
 * struct echo_init - how an Initiator runs (the connect file)
 * @kp: MPA's startup parameters
 * @sizes: ULPDU sizes
 * @nr_sizes: how many
 * @repeat: times @sizes are sent over
 * @seed: ULPDU k is t_fill(seed + k)
 * @close: close once every ULPDU came back
 */
struct echo_init {
	struct mpa_kparams kp;
	u32 sizes[ECHO_MAX_SIZES];
	u32 nr_sizes;
	u32 repeat;
	u64 seed;
	bool close;
};

static void echo_conn_free(struct echo_conn *ec)
{
	kfree(ec->sizes);
	kvfree(ec->buf);
	kvfree(ec->exp);
	kvfree(ec->txbuf);
	kfree(ec);
}

static struct echo_conn *echo_conn_new(u32 role, const struct echo_init *in)
{
	struct echo_conn *ec;

	ec = kzalloc(sizeof(*ec), GFP_KERNEL);
	if (!ec)
		return NULL;
	ec->role = role;
	mutex_init(&ec->mu);
	spin_lock_init(&ec->lock);
	atomic64_set(&ec->tx_done, 0);
	atomic_set(&ec->inflight, 0);
	INIT_DELAYED_WORK(&ec->answer_work, echo_answer_work);
	INIT_DELAYED_WORK(&ec->resume_work, echo_resume_work);
	INIT_DELAYED_WORK(&ec->send_work, echo_send_work);
	INIT_WORK(&ec->greet_work, echo_greet_work);
	INIT_WORK(&ec->room_work, echo_room_work);
	INIT_WORK(&ec->close_work, echo_close_work);
	ec->rx_crc = ~0;
	ec->odd = READ_ONCE(odd_bvecs);
	ec->inline_resume = READ_ONCE(inline_resume);
	ec->slow_ms = READ_ONCE(slow_ms);
	ec->gfp = READ_ONCE(noio) ? GFP_NOIO : GFP_KERNEL;
	if (role == MPA_ROLE_RESPONDER) {
		ec->sink = READ_ONCE(sink);
		ec->answer_ms = READ_ONCE(answer_ms);
		ec->reject = READ_ONCE(reject);
		ec->greet = min_t(u32, READ_ONCE(greet), MPA_MAX_ULPDU);
		ec->greet_max = READ_ONCE(greet_max);
		ec->greet_retry = READ_ONCE(greet_retry);
		if (ec->sink) {
			ec->buf = kvmalloc(MPA_MAX_ULPDU, GFP_KERNEL);
			if (!ec->buf)
				goto fail;
		}
		if (ec->greet) {
			ec->txbuf = kvmalloc(ec->greet, GFP_KERNEL);
			if (!ec->txbuf)
				goto fail;
		}
		return ec;
	}
	ec->sizes = kmemdup(in->sizes, in->nr_sizes * sizeof(u32), GFP_KERNEL);
	ec->nr_sizes = in->nr_sizes;
	ec->total = in->nr_sizes * in->repeat;
	ec->seed = in->seed;
	ec->close_when_done = in->close;
	ec->buf = kvmalloc(MPA_MAX_ULPDU, GFP_KERNEL);
	ec->exp = kvmalloc(MPA_MAX_ULPDU, GFP_KERNEL);
	ec->txbuf = kvmalloc(MPA_MAX_ULPDU, GFP_KERNEL);
	if (!ec->sizes || !ec->buf || !ec->exp || !ec->txbuf)
		goto fail;
	return ec;
fail:
	echo_conn_free(ec);
	return NULL;
}

/*
 * Run MPA on the connected @sock (ours from now on, released on failure)
 * with @kp. An Initiator's @in says what to send.
 */
static int echo_start(struct socket *sock, const struct mpa_kparams *kp,
		      const struct echo_init *in)
{
	struct echo_conn *ec;
	struct mpa_conn *c;
	int ret;

	ec = echo_conn_new(kp->role, in);
	if (!ec) {
		sock_release(sock);
		return -ENOMEM;
	}
	kernel_getpeername(sock, (struct sockaddr *)&ec->peer);
	if (ec->gfp == GFP_NOIO) {
		/*
		 * What a consumer in the memory reclaim path (a storage
		 * target or initiator) does before it uses the socket: MPA
		 * allocates with these flags, and from the socket's own page
		 * fragment (mpa.rst, "Memory").
		 */
		sock->sk->sk_allocation = GFP_NOIO;
		sock->sk->sk_use_task_frag = false;
	}
	ec->sock = sock;
	mutex_lock(&echo_mutex);
	ec->id = ++echo_next_id;
	list_add_tail(&ec->list, &echo_conns);
	mutex_unlock(&echo_mutex);

	/* Callbacks may run before mpa_kattach() returns; work waits. */
	mutex_lock(&ec->mu);
	c = mpa_kattach(sock, kp, &echo_ops, ec);
	if (IS_ERR(c)) {
		ret = PTR_ERR(c);
		spin_lock(&ec->lock);
		ec->kerr = ret;
		ec->phase = ECHO_FAILED;
		ec->released = true;
		spin_unlock(&ec->lock);
		sock_release(sock);
		ec->sock = NULL;
		mutex_unlock(&ec->mu);
		return ret;
	}
	ec->c = c;
	mutex_unlock(&ec->mu);
	return 0;
}

static void echo_responder_params(struct mpa_kparams *kp)
{
	memset(kp, 0, sizeof(*kp));
	kp->role = MPA_ROLE_RESPONDER;
	kp->markers = READ_ONCE(markers);
	kp->no_crc = !READ_ONCE(crc);
	kp->enhanced.ird = min_t(u32, READ_ONCE(ird), MPA_IRD_ORD_MAX);
	kp->enhanced.ord = min_t(u32, READ_ONCE(ord), MPA_IRD_ORD_MAX);
	kp->enhanced.rtr = READ_ONCE(rtr) & MPA_RTR_ALL;
	kp->timeout_ms = READ_ONCE(timeout_ms);
}

/* Listening */

static int echo_listen_thread(void *arg)
{
	struct echo_listener *l = arg;
	struct mpa_kparams kp;
	struct socket *ns;
	int ret;

	while (!kthread_should_stop()) {
		ret = kernel_accept(l->sock, &ns, 0);
		if (ret) {
			/* shut down (we are being stopped), or no memory */
			schedule_timeout_interruptible(HZ / 10);
			continue;
		}
		echo_responder_params(&kp);
		echo_start(ns, &kp, NULL);
	}
	return 0;
}

static int echo_listen(struct echo_listener *l, int family)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in6 *sin6;
	struct sockaddr_in *sin;
	int ret, len;

	ret = sock_create_kern(&init_net, family, SOCK_STREAM, IPPROTO_TCP,
			       &l->sock);
	if (ret)
		return ret;
	sock_set_reuseaddr(l->sock->sk);
	if (rcvbuf)
		sock_set_rcvbuf(l->sock->sk, rcvbuf);
	if (family == AF_INET6) {
		ret = ip6_sock_set_v6only(l->sock->sk);
		if (ret)
			goto fail;
		sin6 = (struct sockaddr_in6 *)&ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_any;
		sin6->sin6_port = htons(port);
		len = sizeof(*sin6);
	} else {
		sin = (struct sockaddr_in *)&ss;
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
		sin->sin_port = htons(port);
		len = sizeof(*sin);
	}
	ret = kernel_bind(l->sock, (struct sockaddr *)&ss, len);
	if (!ret)
		ret = kernel_listen(l->sock, 64);
	if (ret)
		goto fail;
	l->thread = kthread_run(echo_listen_thread, l, "mpa_echo/%s",
				family == AF_INET6 ? "v6" : "v4");
	if (IS_ERR(l->thread)) {
		ret = PTR_ERR(l->thread);
		l->thread = NULL;
		goto fail;
	}
	return 0;
fail:
	sock_release(l->sock);
	l->sock = NULL;
	return ret;
}

static void echo_unlisten(struct echo_listener *l)
{
	if (!l->sock)
		return;
	/* wakes the thread from accept(): the socket no longer listens */
	kernel_sock_shutdown(l->sock, SHUT_RDWR);
	kthread_stop(l->thread);
	sock_release(l->sock);
	l->sock = NULL;
}

/* Connecting out (the connect file) */

static int echo_parse_addr(const char *addr, const char *port_str,
			   struct sockaddr_storage *ss, int *len)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	u16 p;

	if (kstrtou16(port_str, 10, &p) || !p)
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		if (!in6_pton(addr, -1, sin6->sin6_addr.s6_addr, -1, NULL))
			return -EINVAL;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(p);
		*len = sizeof(*sin6);
	} else {
		if (!in4_pton(addr, -1, (u8 *)&sin->sin_addr.s_addr, -1, NULL))
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(p);
		*len = sizeof(*sin);
	}
	return 0;
}

static int echo_parse_sizes(char *v, struct echo_init *in)
{
	char *s;
	u32 n;

	in->nr_sizes = 0;
	while ((s = strsep(&v, ","))) {
		if (in->nr_sizes == ECHO_MAX_SIZES || kstrtou32(s, 0, &n) ||
		    !n || n > MPA_MAX_ULPDU)
			return -EINVAL;
		in->sizes[in->nr_sizes++] = n;
	}
	return 0;
}

static int echo_parse_opt(char *opt, struct echo_init *in)
{
	struct mpa_kparams *kp = &in->kp;
	char *v = strchr(opt, '=');
	u32 n = 0;

	if (!v)
		return -EINVAL;
	*v++ = 0;
	if (!strcmp(opt, "pd")) {
		kp->pd = v;
		kp->pd_len = strlen(v);
		return 0;
	}
	if (!strcmp(opt, "sizes"))
		return echo_parse_sizes(v, in);
	if (!strcmp(opt, "seed"))
		return kstrtou64(v, 0, &in->seed);
	if (kstrtou32(v, 0, &n))
		return -EINVAL;
	if (!strcmp(opt, "markers")) {
		kp->markers = n;
	} else if (!strcmp(opt, "crc")) {
		kp->no_crc = !n;
	} else if (!strcmp(opt, "rev")) {
		if (n > MPA_REVISION_2)
			return -EINVAL;
		kp->rev0 = n == MPA_REVISION_0;
		kp->permissive = kp->rev0;
		kp->revision = n;
	} else if (!strcmp(opt, "ird")) {
		kp->enhanced.ird = n;
	} else if (!strcmp(opt, "ord")) {
		kp->enhanced.ord = n;
	} else if (!strcmp(opt, "p2p")) {
		kp->enhanced.flags = n ? MPA_ENH_PEER_TO_PEER : 0;
	} else if (!strcmp(opt, "rtr")) {
		kp->enhanced.rtr = n;
	} else if (!strcmp(opt, "repeat")) {
		in->repeat = n;
	} else if (!strcmp(opt, "close")) {
		in->close = n;
	} else if (!strcmp(opt, "timeout")) {
		kp->timeout_ms = n;
	} else {
		return -EINVAL;
	}
	return 0;
}

static int echo_connect(char *line)
{
	struct sockaddr_storage ss;
	struct echo_init *in;
	char *addr, *port_str, *opt;
	struct socket *sock;
	int ret, len;

	in = kzalloc(sizeof(*in), GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	in->kp.role = MPA_ROLE_INITIATOR;
	in->kp.revision = MPA_REVISION_1;
	in->kp.pd = request_pd;
	in->kp.pd_len = strlen(request_pd);
	in->kp.timeout_ms = READ_ONCE(timeout_ms);
	in->sizes[0] = 1000;
	in->nr_sizes = 1;
	in->repeat = 1;
	in->close = true;

	line = strim(line);
	addr = strsep(&line, " \t");
	port_str = strsep(&line, " \t");
	ret = -EINVAL;
	if (!addr || !port_str)
		goto out;
	while ((opt = strsep(&line, " \t"))) {
		if (!*opt)
			continue;
		ret = echo_parse_opt(opt, in);
		if (ret)
			goto out;
	}
	ret = -EINVAL;
	if (in->nr_sizes * (u64)in->repeat > ECHO_MAX_TX)
		goto out;
	ret = echo_parse_addr(addr, port_str, &ss, &len);
	if (ret)
		goto out;

	ret = sock_create_kern(&init_net, ss.ss_family, SOCK_STREAM,
			       IPPROTO_TCP, &sock);
	if (ret)
		goto out;
	ret = kernel_connect(sock, (struct sockaddr *)&ss, len, 0);
	if (ret) {
		sock_release(sock);
		goto out;
	}
	ret = echo_start(sock, &in->kp, in);
out:
	kfree(in);
	return ret;
}

/* debugfs */

static ssize_t echo_connect_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	char *line;
	int ret;

	if (count > 1024)
		return -EINVAL;
	line = memdup_user_nul(ubuf, count);
	if (IS_ERR(line))
		return PTR_ERR(line);
	ret = echo_connect(line);
	kfree(line);
	return ret ? ret : count;
}

static const struct file_operations echo_connect_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= echo_connect_write,
	.llseek	= noop_llseek,
};

static void echo_show_one(struct seq_file *m, struct echo_conn *ec)
{
	u32 i;

	spin_lock(&ec->lock);
	seq_printf(m, "id=%u role=%s state=%s peer=%pISpc", ec->id,
		   ec->role == MPA_ROLE_INITIATOR ? "initiator" : "responder",
		   echo_phase_names[ec->phase], &ec->peer);
	seq_printf(m, " rev=%d res_flags=0x%x rtr=0x%x ird=%u ord=%u mulpdu=%u",
		   ec->have_res ? ec->res.revision : -1, ec->res.flags,
		   ec->res.rtr, ec->res.ird, ec->res.ord, ec->mulpdu);
	seq_printf(m, " frame_rev=%u frame_flags=0x%x",
		   ec->frame.revision, ec->frame.flags);
	seq_printf(m, " rx=%llu rx_octets=%llu csum=0x%08x",
		   ec->rx_ulpdus, ec->rx_octets, ~ec->rx_crc);
	seq_printf(m, " tx=%llu tx_octets=%llu tx_done=%llu",
		   ec->tx_ulpdus, ec->tx_octets,
		   (u64)atomic64_read(&ec->tx_done));
	seq_printf(m, " refused=%llu resumes=%llu send_eagain=%llu send_epipe=%llu writable=%llu",
		   ec->refused, ec->resumes, ec->send_eagain, ec->send_epipe,
		   ec->writable);
	seq_printf(m, " greeted=%llu greet_runs=%llu noio=%d", ec->greeted,
		   ec->greet_runs, ec->gfp == GFP_NOIO);
	seq_printf(m, " sent=%u total=%u verified=%llu bad=%llu",
		   ec->next_tx, ec->total, ec->verified, ec->bad);
	seq_printf(m, " err_code=%u err_reason=%u err_errno=%d kerr=%d",
		   ec->err.code, ec->err.reason, ec->err.errnum, ec->kerr);
	seq_printf(m, " errors=%u peer_closed=%d released=%d pd=",
		   ec->errors, ec->peer_closed, ec->released);
	if (!ec->pd_len)
		seq_puts(m, "-");
	for (i = 0; i < ec->pd_len; i++)
		seq_printf(m, "%02x", ec->pd[i]);
	seq_putc(m, '\n');
	spin_unlock(&ec->lock);
}

static int echo_conns_show(struct seq_file *m, void *v)
{
	struct echo_conn *ec;

	mutex_lock(&echo_mutex);
	list_for_each_entry(ec, &echo_conns, list)
		echo_show_one(m, ec);
	mutex_unlock(&echo_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(echo_conns);

/* Module */

static void echo_cleanup(void)
{
	struct echo_conn *ec, *tmp;
	int i;

	debugfs_remove_recursive(echo_dir);
	for (i = 0; i < ARRAY_SIZE(echo_listeners); i++)
		echo_unlisten(&echo_listeners[i]);

	mutex_lock(&echo_mutex);
	list_for_each_entry(ec, &echo_conns, list) {
		spin_lock(&ec->lock);
		ec->dying = true;
		spin_unlock(&ec->lock);
	}
	wake_up_all(&echo_waitq);
	list_for_each_entry(ec, &echo_conns, list) {
		cancel_work_sync(&ec->close_work);
		echo_teardown(ec, true);
	}
	mutex_unlock(&echo_mutex);

	/* TCP lets go of our pages once the sockets are gone */
	while (!wait_event_timeout(echo_waitq, !atomic_read(&echo_inflight),
				   10 * HZ))
		pr_info("mpa_echo: waiting for %d sends to complete\n",
			atomic_read(&echo_inflight));
	/* and the last echo_tx_done() has returned */
	synchronize_rcu();
	destroy_workqueue(echo_workq);

	list_for_each_entry_safe(ec, tmp, &echo_conns, list) {
		list_del(&ec->list);
		echo_conn_free(ec);
	}
}

static int __init echo_init(void)
{
	int ret;

	echo_workq = alloc_workqueue("mpa_echo", WQ_UNBOUND, 0);
	if (!echo_workq)
		return -ENOMEM;
	echo_dir = debugfs_create_dir("mpa_echo", NULL);
	debugfs_create_file("conns", 0444, echo_dir, NULL, &echo_conns_fops);
	debugfs_create_file("connect", 0200, echo_dir, NULL,
			    &echo_connect_fops);
	if (port) {
		ret = echo_listen(&echo_listeners[0], AF_INET);
		if (ret) {
			pr_err("mpa_echo: cannot listen on port %u (IPv4): %d\n",
			       port, ret);
			echo_cleanup();
			return ret;
		}
		ret = echo_listen(&echo_listeners[1], AF_INET6);
		if (ret)
			pr_warn("mpa_echo: no IPv6 listener on port %u: %d\n",
				port, ret);
	}
	return 0;
}

static void __exit echo_exit(void)
{
	echo_cleanup();
}

module_init(echo_init);
module_exit(echo_exit);

MODULE_DESCRIPTION("Sample in-kernel MPA consumer: an echo and sink service");
MODULE_LICENSE("GPL");
