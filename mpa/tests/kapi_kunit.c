// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the in-kernel consumer API (include/net/mpa.h): argument
 * checks and error paths, and kernel-to-kernel exchanges over loopback.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <net/mpa.h>

#include "conn.h"
#include "netns.h"
#include "pair.h"

#define KAPI_WAIT	(10 * HZ)

struct kapi_end {
	struct completion established;
	struct completion request;
	struct completion ulpdu;
	struct completion error;
	struct completion closed;
	struct completion tx_done;
	struct mpa_ktx tx;
	struct mpa_error_info err;
	u8 peer_pd[MPA_MAX_PRIVATE_DATA];
	u32 peer_pd_len;
	u8 got[MPA_MAX_ULPDU];
	u32 got_len;
	int ulpdus;
	int pauses;		/* return -EAGAIN this many times */
	bool resume_bh;		/* ... and resume from a softirq */
	bool resume_queued;	/* that resume queued the work */
	struct mpa_conn *c;
	struct tasklet_struct resume;
	bool reject;
	bool accept_later;
	int replies;		/* the reply callback ran this often */
	bool refuse_resume;	/* refuse each ULPDU, resuming at once */
	int refusals;		/* how often it did */
	bool abort_in_ulpdu;	/* reset the connection, then copy */
	int abort_ret;		/* ...and return this when the copy fails */
	int copy_ret;		/* what mpa_ulpdu_copy() returned */
	struct socket *early;	/* the request callback has it sent on first */
	struct completion early_sent;	/* ...by a thread of its own */
	int early_ret;		/* what that send returned */
	int answer_ret;		/* what the request callback's answer returned */
	int fail_once;		/* return this from the ulpdu callback once */
	struct completion failed;	/* ...it did */
	bool source_iter;	/* copy to an ITER_SOURCE iterator first */
	int source_ret;		/* what that copy returned */
	bool detach_in_reply;	/* the reply callback detaches */
	bool detach_in_ulpdu;	/* the ulpdu callback takes it, then detaches */
	struct completion detached;	/* ...and mpa_kdetach() returned */
	bool fin_in_writable;	/* writable: @early sends its FIN, then reject */
	struct completion writable;	/* the writable callback ran */
};

static void kapi_resume_bh(struct tasklet_struct *t)
{
	struct kapi_end *e = from_tasklet(e, t, resume);

	mpa_kresume(e->c);
}

static struct kapi_end *kapi_end_new(struct kunit *test)
{
	struct kapi_end *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, e);
	init_completion(&e->established);
	init_completion(&e->request);
	init_completion(&e->ulpdu);
	init_completion(&e->error);
	init_completion(&e->closed);
	init_completion(&e->tx_done);
	init_completion(&e->failed);
	init_completion(&e->detached);
	init_completion(&e->writable);
	tasklet_setup(&e->resume, kapi_resume_bh);
	return e;
}

/* @len octets at @buf from @sock, a socket without MPA: a raw peer */
static int kapi_send_raw(struct socket *sock, const void *buf, size_t len)
{
	struct kvec kv = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {};

	return kernel_sendmsg(sock, &msg, &kv, 1, len);
}

static int kapi_early_send(void *arg)
{
	struct kapi_end *e = arg;

	e->early_ret = kapi_send_raw(e->early, "FPDU", 4);
	complete(&e->early_sent);
	return 0;
}

static void kapi_request(struct mpa_conn *c, void *priv,
			 const struct mpa_frame_info *req, const void *pd,
			 u32 pd_len)
{
	struct kapi_end *e = priv;

	memcpy(e->peer_pd, pd, pd_len);
	e->peer_pd_len = pd_len;
	complete(&e->request);
	if (e->accept_later)
		return;
	/*
	 * Octets that arrive while the work owns the socket: its backlog.
	 * Sent by a thread of their own, as a socket's lock is not to be
	 * taken under another's.
	 */
	if (e->early) {
		struct task_struct *t = kthread_run(kapi_early_send, e,
						    "mpa_kunit_early");

		if (IS_ERR(t))
			return;
		wait_for_completion(&e->early_sent);
		if (e->early_ret != 4)
			return;
	}
	if (e->reject)
		e->answer_ret = mpa_kreject(c, "no", 2);
	else
		e->answer_ret = mpa_kaccept(c, "yes", 3);
}

static void kapi_reply(struct mpa_conn *c, void *priv,
		       const struct mpa_frame_info *rep, const void *pd,
		       u32 pd_len)
{
	struct kapi_end *e = priv;

	memcpy(e->peer_pd, pd, pd_len);
	e->peer_pd_len = pd_len;
	e->replies++;
	if (e->detach_in_reply) {
		mpa_kdetach(c);
		complete(&e->detached);
	}
}

static void kapi_established(struct mpa_conn *c, void *priv)
{
	complete(&((struct kapi_end *)priv)->established);
}

static int kapi_ulpdu(struct mpa_conn *c, void *priv, struct mpa_ulpdu *u)
{
	struct kapi_end *e = priv;
	struct iov_iter to;
	struct kvec kv;

	if (READ_ONCE(e->refuse_resume)) {
		WRITE_ONCE(e->refusals, e->refusals + 1);
		mpa_kresume(c);
		return -EAGAIN;
	}
	if (e->pauses) {
		e->pauses--;
		if (!e->resume_bh) {
			mpa_kresume(c);	/* from the callback: again from the work */
			return -EAGAIN;
		}
		/*
		 * From a softirq that interrupts this very task (as a
		 * completion on this CPU would): not a call from the
		 * callback, whatever current says. It must queue the work:
		 * once the callback is over nothing else would deliver.
		 */
		e->c = c;
		local_bh_disable();
		tasklet_schedule(&e->resume);
		local_bh_enable();	/* runs it here, in softirq context */
		e->resume_queued = test_bit(MPA_EV_RESUME, &c->events);
		return -EAGAIN;
	}
	if (e->fail_once) {
		int ret = e->fail_once;

		e->fail_once = 0;
		complete(&e->failed);
		return ret;
	}
	kv.iov_base = e->got;
	kv.iov_len = u->len;
	if (e->source_iter) {
		/* a source is no place to copy to */
		iov_iter_kvec(&to, ITER_SOURCE, &kv, 1, u->len);
		e->source_ret = mpa_ulpdu_copy(u, 0, &to, u->len);
	}
	iov_iter_kvec(&to, ITER_DEST, &kv, 1, u->len);
	/* as a send from here does when TCP took part and MPA has no memory */
	if (e->abort_in_ulpdu)
		mpa_conn_abort(c);
	e->copy_ret = mpa_ulpdu_copy(u, 0, &to, u->len);
	if (e->copy_ret) {
		complete(&e->ulpdu);
		return e->abort_ret;
	}
	e->got_len = u->len;
	e->ulpdus++;
	if (e->detach_in_ulpdu) {
		mpa_kdetach(c);
		complete(&e->detached);
	}
	complete(&e->ulpdu);
	return 0;
}

static void kapi_error(struct mpa_conn *c, void *priv,
		       const struct mpa_error_info *err)
{
	struct kapi_end *e = priv;

	e->err = *err;
	complete(&e->error);
}

static void kapi_closed(struct mpa_conn *c, void *priv)
{
	complete(&((struct kapi_end *)priv)->closed);
}

static int kapi_early_fin(void *arg)
{
	struct kapi_end *e = arg;

	e->early_ret = kernel_sock_shutdown(e->early, SHUT_WR);
	complete(&e->early_sent);
	return 0;
}

/*
 * With fin_in_writable, the peer's FIN comes while the work owns the
 * socket (its backlog), then the Initiator refuses the Reply.
 */
static void kapi_writable(struct mpa_conn *c, void *priv)
{
	struct kapi_end *e = priv;
	struct task_struct *t;
	unsigned long end;

	if (e->fin_in_writable && e->early) {
		t = kthread_run(kapi_early_fin, e, "mpa_kunit_early");
		if (!IS_ERR(t)) {
			wait_for_completion(&e->early_sent);
			end = jiffies + KAPI_WAIT;
			while (!READ_ONCE(c->sk->sk_backlog.tail) &&
			       time_before(jiffies, end))
				usleep_range(1000, 2000);
			e->answer_ret = mpa_kreject(c, NULL, 0);
		}
	}
	complete(&e->writable);
}

static const struct mpa_kops kapi_ops = {
	.request = kapi_request,
	.reply = kapi_reply,
	.established = kapi_established,
	.ulpdu = kapi_ulpdu,
	.error = kapi_error,
	.closed = kapi_closed,
	.writable = kapi_writable,
};

static void kapi_tx_done(struct mpa_ktx *tx)
{
	struct kapi_end *e = container_of(tx, struct kapi_end, tx);

	complete(&e->tx_done);
}

static const struct mpa_kparams kapi_initiator = {
	.role = MPA_ROLE_INITIATOR,
	.markers = true,
	.pd = "hello",
	.pd_len = 5,
};

static const struct mpa_kparams kapi_responder = {
	.role = MPA_ROLE_RESPONDER,
	.markers = true,
};

static void kapi_detach(void *data)
{
	mpa_kdetach(data);
}

static struct mpa_conn *kapi_attach(struct kunit *test, struct socket *sock,
				    const struct mpa_kparams *p,
				    struct kapi_end *e)
{
	struct mpa_conn *c = mpa_kattach(sock, p, &kapi_ops, e);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(c), "mpa_kattach: %ld",
			       PTR_ERR(c));
	/* before the pair's sockets are released (actions run in reverse) */
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, kapi_detach,
							   c));
	return c;
}

static bool kapi_wait(struct completion *done)
{
	return wait_for_completion_timeout(done, KAPI_WAIT) > 0;
}

static void kapi_free_page(void *page)
{
	__free_page(page);
}

/* Send one ULPDU of @len octets @fill from a page of its own, zero-copy. */
static void kapi_send_one(struct kunit *test, struct mpa_conn *c, u32 len,
			  int fill)
{
	struct page *page = alloc_page(GFP_KERNEL);
	struct bio_vec bv;

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, kapi_free_page,
							   page));
	memset(page_address(page), fill, PAGE_SIZE);
	bvec_set_page(&bv, page, len, 0);
	KUNIT_ASSERT_EQ(test, 0, mpa_ksend(c, &bv, 1, len, NULL));
}

/* Bad arguments fail without touching the socket. */
static void kapi_attach_args(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct mpa_kparams p = kapi_initiator;
	u8 pd[MPA_MAX_PRIVATE_DATA + 1] = {};
	struct net *net = sock_net(pair->client->sk);
	struct mpa_net_policy saved, pol;

	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(mpa_kattach(NULL, &p, &kapi_ops, NULL)));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(mpa_kattach(pair->client, NULL, &kapi_ops,
					    NULL)));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(mpa_kattach(pair->client, &p, NULL, NULL)));
	p.role = 3;
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(mpa_kattach(pair->client, &p, &kapi_ops, NULL)));
	p = kapi_initiator;
	p.revision = 3;
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(mpa_kattach(pair->client, &p, &kapi_ops, NULL)));
	p = kapi_initiator;
	p.enhanced.ird = MPA_IRD_ORD_MAX + 1;
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(mpa_kattach(pair->client, &p, &kapi_ops, NULL)));
	p = kapi_initiator;
	p.pd = pd;
	p.pd_len = MPA_MAX_PRIVATE_DATA + 1;
	KUNIT_EXPECT_EQ(test, -EMSGSIZE,
			PTR_ERR(mpa_kattach(pair->client, &p, &kapi_ops, NULL)));
	p.pd_len = MPA_V2_PRIVATE_DATA + 1;
	p.revision = MPA_REVISION_2;
	KUNIT_EXPECT_EQ(test, -EMSGSIZE,
			PTR_ERR(mpa_kattach(pair->client, &p, &kapi_ops, NULL)));
	/* a length without Private Data is a bad argument, as in mpa_kaccept() */
	p = kapi_initiator;
	p.pd = NULL;
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(mpa_kattach(pair->client, &p, &kapi_ops, NULL)));
	/* without a ulpdu callback every ULPDU would be lost */
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(mpa_kattach(pair->client, &kapi_initiator,
					    &(struct mpa_kops){}, NULL)));
	p = kapi_initiator;
	p.no_crc = true;
	/* the namespace's policy decides (RFC 5044 section 4.4) */
	mpa_net_policy(net, &saved);
	pol = saved;
	pol.crc_off_allowed = false;
	mpa_net_policy_set(net, &pol);
	KUNIT_EXPECT_EQ(test, -EPERM,
			PTR_ERR(mpa_kattach(pair->client, &p, &kapi_ops, NULL)));
	mpa_net_policy_set(net, &saved);
	/* none of it attached MPA */
	KUNIT_EXPECT_NULL(test, inet_csk(pair->client->sk)->icsk_ulp_ops);

	/* a socket in another kernel user's hands is not MPA's to have */
	write_lock_bh(&pair->client->sk->sk_callback_lock);
	rcu_assign_sk_user_data(pair->client->sk, test);
	write_unlock_bh(&pair->client->sk->sk_callback_lock);
	KUNIT_EXPECT_EQ(test, -EBUSY,
			PTR_ERR(mpa_kattach(pair->client, &kapi_initiator,
					    &kapi_ops, NULL)));
	KUNIT_EXPECT_NULL(test, inet_csk(pair->client->sk)->icsk_ulp_ops);
	write_lock_bh(&pair->client->sk->sk_callback_lock);
	rcu_assign_sk_user_data(pair->client->sk, NULL);
	write_unlock_bh(&pair->client->sk->sk_callback_lock);

	/* a listener is not a connection; a socket takes one ULP only */
	KUNIT_EXPECT_EQ(test, -ENOTCONN,
			PTR_ERR(mpa_kattach(pair->listener, &kapi_initiator,
					    &kapi_ops, NULL)));
	KUNIT_ASSERT_EQ(test, 0, mpa_test_attach(pair->server));
	KUNIT_EXPECT_EQ(test, -EEXIST,
			PTR_ERR(mpa_kattach(pair->server, &kapi_responder,
					    &kapi_ops, NULL)));
}

/* Before Full Operation nothing may be sent; lengths are checked. */
static void kapi_send_args(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *e = kapi_end_new(test);
	struct page *page = alloc_page(GFP_KERNEL);
	struct bio_vec bv;
	struct mpa_conn *c;

	KUNIT_ASSERT_NOT_NULL(test, page);
	bvec_set_page(&bv, page, PAGE_SIZE, 0);
	c = kapi_attach(test, pair->server, &kapi_responder, e);
	KUNIT_EXPECT_EQ(test, -ENOTCONN, mpa_ksend(c, &bv, 1, 10, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, mpa_ksend(c, &bv, 1, 0, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			mpa_ksend(c, &bv, 1, PAGE_SIZE + 1, NULL));
	KUNIT_EXPECT_EQ(test, -EMSGSIZE,
			mpa_ksend(c, &bv, 1, MPA_MAX_ULPDU + 1, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, mpa_kaccept(c, NULL, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, mpa_kreject(c, NULL, 3));
	KUNIT_EXPECT_EQ(test, -ENOTCONN, mpa_kresult(c, &(struct mpa_result){}));
	__free_page(page);
}

/* Kernel to kernel: negotiate, zero-copy send with Markers, place. */
static void kapi_exchange(struct kunit *test, int family, u32 len,
			  int pauses, bool resume_bh)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, family);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct mpa_conn *ci;
	struct bio_vec bv[17];
	struct page *pages[17];
	struct mpa_result res;
	unsigned int i, n = DIV_ROUND_UP(len, PAGE_SIZE);
	u32 left = len;

	er->pauses = pauses;
	er->resume_bh = resume_bh;
	kapi_attach(test, pair->server, &kapi_responder, er);
	ci = kapi_attach(test, pair->client, &kapi_initiator, ei);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->request));
	KUNIT_EXPECT_EQ(test, 5U, er->peer_pd_len);
	KUNIT_EXPECT_MEMEQ(test, er->peer_pd, "hello", 5);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->established));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->established));
	KUNIT_EXPECT_EQ(test, 3U, ei->peer_pd_len);
	KUNIT_EXPECT_MEMEQ(test, ei->peer_pd, "yes", 3);
	KUNIT_ASSERT_EQ(test, 0, mpa_kresult(ci, &res));
	KUNIT_EXPECT_EQ(test, MPA_REVISION_1, res.revision);
	KUNIT_EXPECT_TRUE(test, res.flags & MPA_RESULT_TX_MARKERS);
	KUNIT_EXPECT_TRUE(test, res.flags & MPA_RESULT_CRC);
	KUNIT_EXPECT_EQ(test, res.mulpdu, mpa_kmulpdu(ci));

	for (i = 0; i < n; i++) {
		u32 k = min_t(u32, left, PAGE_SIZE);

		pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
		memset(page_address(pages[i]), 'a' + i, PAGE_SIZE);
		bvec_set_page(&bv[i], pages[i], k, 0);
		left -= k;
	}
	ei->tx.done = kapi_tx_done;
	KUNIT_ASSERT_EQ(test, 0, mpa_ksend(ci, bv, n, len, &ei->tx));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	tasklet_kill(&er->resume);
	KUNIT_EXPECT_EQ(test, len, er->got_len);
	KUNIT_EXPECT_EQ(test, 1, er->ulpdus);
	KUNIT_EXPECT_EQ(test, 0, er->pauses);
	if (resume_bh)
		KUNIT_EXPECT_TRUE(test, er->resume_queued);
	for (i = 0; i < len; i += 509)
		KUNIT_ASSERT_EQ(test, (int)('a' + i / PAGE_SIZE),
				(int)er->got[i]);
	/* TCP let go of the pages: they may be reused */
	KUNIT_EXPECT_TRUE(test, kapi_wait(&ei->tx_done));
	for (i = 0; i < n; i++)
		__free_page(pages[i]);

	/* the Initiator closes: the Responder hears of it */
	kernel_sock_shutdown(pair->client, SHUT_WR);
	KUNIT_EXPECT_TRUE(test, kapi_wait(&er->closed));
	KUNIT_EXPECT_FALSE(test, completion_done(&er->error));
}

static void kapi_exchange_ipv4(struct kunit *test)
{
	kapi_exchange(test, AF_INET, 1000, 0, false);
}

static void kapi_exchange_ipv6_large(struct kunit *test)
{
	/* Markers cut it into too many pieces: copied, done at once */
	kapi_exchange(test, AF_INET6, MPA_MAX_ULPDU, 0, false);
}

static void kapi_exchange_paused(struct kunit *test)
{
	kapi_exchange(test, AF_INET, 3000, 2, false);
}

static void kapi_exchange_resumed_in_softirq(struct kunit *test)
{
	kapi_exchange(test, AF_INET, 3000, 1, true);
}

/* The Responder rejects: the Initiator's error tells, with the reply. */
static void kapi_reject(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);

	er->reject = true;
	kapi_attach(test, pair->server, &kapi_responder, er);
	kapi_attach(test, pair->client, &kapi_initiator, ei);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->error));
	KUNIT_EXPECT_EQ(test, (u32)MPA_REASON_REJECTED, ei->err.reason);
	KUNIT_EXPECT_EQ(test, ECONNREFUSED, ei->err.errnum);
	KUNIT_EXPECT_EQ(test, 2U, ei->peer_pd_len);
	KUNIT_EXPECT_MEMEQ(test, ei->peer_pd, "no", 2);
	KUNIT_EXPECT_FALSE(test, completion_done(&er->error));
	KUNIT_EXPECT_FALSE(test, completion_done(&ei->established));
}

/* Two Initiators: both fail with code 4 (Initiator/Initiator). */
static void kapi_two_initiators(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET6);
	struct kapi_end *e1 = kapi_end_new(test), *e2 = kapi_end_new(test);

	kapi_attach(test, pair->server, &kapi_initiator, e1);
	kapi_attach(test, pair->client, &kapi_initiator, e2);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&e1->error));
	KUNIT_EXPECT_EQ(test, (u32)MPA_ERR_STARTUP, e1->err.code);
	KUNIT_EXPECT_EQ(test, (u32)MPA_REASON_INIT_INIT, e1->err.reason);
}

/* The answer may come later, from outside a callback. */
static void kapi_accept_later(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct mpa_conn *cr;

	er->accept_later = true;
	cr = kapi_attach(test, pair->server, &kapi_responder, er);
	kapi_attach(test, pair->client, &kapi_initiator, ei);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->request));
	msleep(100);
	KUNIT_EXPECT_FALSE(test, completion_done(&ei->established));
	KUNIT_ASSERT_EQ(test, 0, mpa_kaccept(cr, NULL, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, mpa_kaccept(cr, NULL, 0));
	KUNIT_EXPECT_TRUE(test, kapi_wait(&ei->established));
	KUNIT_EXPECT_TRUE(test, kapi_wait(&er->established));
}

/*
 * A send from the ulpdu callback may reset the connection (TCP took the
 * head of the FPDU, MPA has no memory for its tail: mpa_tx_hand()), which
 * purges the receive queue under the consumer's view: its copy fails with
 * -ECONNRESET instead of placing octets that are gone (it used to loop for
 * ever, the socket locked), nothing is counted as received, and the
 * Initiator hears of the reset.
 */
static void kapi_abort_in_ulpdu(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct mpa_conn *ci, *cr;
	u64 fpdus;

	er->abort_in_ulpdu = true;
	cr = kapi_attach(test, pair->server, &kapi_responder, er);
	ci = kapi_attach(test, pair->client, &kapi_initiator, ei);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->established));
	kapi_send_one(test, ci, 1000, 'x');
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, -ECONNRESET, er->copy_ret);
	KUNIT_EXPECT_EQ(test, 0, er->ulpdus);
	KUNIT_EXPECT_TRUE(test, kapi_wait(&ei->error));
	KUNIT_EXPECT_EQ(test, ECONNRESET, ei->err.errnum);
	lock_sock(cr->sk);
	fpdus = cr->stats.rx_fpdus;
	release_sock(cr->sk);
	KUNIT_EXPECT_EQ(test, 0ULL, fpdus);
}

/*
 * The same, the callback refusing the ULPDU it could not place (-EAGAIN,
 * or an error of its own): after the reset nothing is left to keep, so
 * nothing waits for an mpa_kresume(): the error is told at once.
 */
static void kapi_abort_in_ulpdu_refused(struct kunit *test)
{
	static const int rets[] = { -EAGAIN, -ENOMEM };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rets); i++) {
		struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
		struct kapi_end *ei = kapi_end_new(test);
		struct kapi_end *er = kapi_end_new(test);
		struct mpa_conn *ci;

		er->abort_in_ulpdu = true;
		er->abort_ret = rets[i];
		kapi_attach(test, pair->server, &kapi_responder, er);
		ci = kapi_attach(test, pair->client, &kapi_initiator, ei);
		KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->established));
		kapi_send_one(test, ci, 1000, 'x');
		KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
		KUNIT_EXPECT_EQ(test, -ECONNRESET, er->copy_ret);
		KUNIT_EXPECT_TRUE_MSG(test, kapi_wait(&er->error),
				      "no error after returning %d", rets[i]);
		KUNIT_EXPECT_EQ(test, 0, er->ulpdus);
	}
}

/*
 * The Responder resets before any FPDU: the Initiator hears of it
 * (error), and its late refusal of the Reply's Private Data (R-7.1.2-13:
 * leave MPA, keep TCP open) finds no TCP to keep open: -ENOTCONN, and
 * the reply callback is not run again.
 */
static void kapi_refuse_after_reset(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct mpa_conn *ci, *cr;

	cr = kapi_attach(test, pair->server, &kapi_responder, er);
	ci = kapi_attach(test, pair->client, &kapi_initiator, ei);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->established));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->established));
	KUNIT_EXPECT_EQ(test, 1, ei->replies);
	lock_sock(cr->sk);
	mpa_conn_abort(cr);
	release_sock(cr->sk);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->error));
	KUNIT_EXPECT_EQ(test, (u32)MPA_ERR_TCP_CLOSED, ei->err.code);
	KUNIT_EXPECT_EQ(test, -ENOTCONN, mpa_kreject(ci, NULL, 0));
	KUNIT_EXPECT_EQ(test, 1, ei->replies);
}

/*
 * Octets of an FPDU from the Responder (against R-7.1.2-15) that came while
 * the Initiator's socket was owned wait in its backlog: a refusal of the
 * Reply made then (R-7.1.2-13) must see them first, as it sees those in
 * TCP's receive queue: -EISCONN, Full Operation stays. It used to leave
 * MPA, and the octets went to the plain stream, framing and all.
 */
static void kapi_refuse_fpdu_in_backlog(struct kunit *test)
{
	static const char rep[] = "MPA ID Rep Frame\x40\x01\x00\x00";
	static const struct mpa_kparams ip = { .role = MPA_ROLE_INITIATOR };
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test);
	struct sock *csk = pair->client->sk;
	struct task_struct *t;
	bool queued = false;
	unsigned long end;
	struct mpa_conn *ci;
	u8 state;
	int ret;

	ci = kapi_attach(test, pair->client, &ip, ei);
	KUNIT_ASSERT_EQ(test, 20, kapi_send_raw(pair->server, rep, 20));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->established));

	lock_sock(csk);
	/*
	 * From a thread of its own (its socket's lock is of the same class
	 * as ours): ULPDU_Length 0x4650 and the first octets of its ULPDU
	 */
	ei->early = pair->server;
	init_completion(&ei->early_sent);
	t = kthread_run(kapi_early_send, ei, "mpa_kunit_early");
	ret = IS_ERR(t) ? PTR_ERR(t) : 0;
	if (!ret)
		wait_for_completion(&ei->early_sent);
	/* the readiness signal: the segment is in the backlog */
	end = jiffies + KAPI_WAIT;
	while (!ret && !(queued = READ_ONCE(csk->sk_backlog.tail)) &&
	       time_before(jiffies, end))
		usleep_range(1000, 2000);
	ret = !ret && ei->early_ret == 4 && queued ?
	      mpa_startup_answer(ci, true, NULL, 0) : -ENOSPC;
	state = mpa_conn_state(ci);
	release_sock(csk);
	KUNIT_ASSERT_NE_MSG(test, -ENOSPC, ret, "no segment in the backlog");
	KUNIT_EXPECT_EQ(test, -EISCONN, ret);
	KUNIT_EXPECT_EQ(test, (u8)MPA_STATE_FULL, state);
}

/*
 * An Initiator that waits for room (mpa_ksend() said -EAGAIN: earlier
 * stream data fills TCP's send buffer, the peer reads none of it)
 * refuses the Reply (R-7.1.2-13) from its writable callback, the peer's
 * FIN having come meanwhile: no callback follows its own reject
 * (mpa_kreject()). The run of callbacks used to go on as in Full
 * Operation, and told it of the FIN (closed).
 */
static void kapi_refuse_in_writable(struct kunit *test)
{
	static const char rep[] = "MPA ID Rep Frame\x40\x01\x00\x00";
	static const struct mpa_kparams ip = { .role = MPA_ROLE_INITIATOR };
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test);
	struct page *page = alloc_page(GFP_KERNEL);
	struct sock *csk = pair->client->sk;
	static u8 sink[SZ_16K];
	unsigned long end;
	struct mpa_conn *ci;
	struct bio_vec bv;
	u8 state;

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, kapi_free_page,
							   page));
	KUNIT_ASSERT_EQ(test, 0, mpa_test_stuck_sender(pair->client,
						       pair->server));
	ci = kapi_attach(test, pair->client, &ip, ei);
	KUNIT_ASSERT_EQ(test, 20, kapi_send_raw(pair->server, rep, 20));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->established));
	bvec_set_page(&bv, page, 16, 0);
	KUNIT_ASSERT_EQ(test, -EAGAIN, mpa_ksend(ci, &bv, 1, 16, NULL));

	ei->early = pair->server;
	init_completion(&ei->early_sent);
	ei->fin_in_writable = true;
	/* the peer reads it all: room, and the writable callback */
	end = jiffies + KAPI_WAIT;
	while (!completion_done(&ei->writable) && time_before(jiffies, end)) {
		struct kvec kv = { .iov_base = sink, .iov_len = sizeof(sink) };
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };

		if (kernel_recvmsg(pair->server, &msg, &kv, 1, sizeof(sink),
				   MSG_DONTWAIT) <= 0)
			usleep_range(1000, 2000);
	}
	KUNIT_ASSERT_TRUE(test, completion_done(&ei->writable));
	/* the rest of that run of callbacks, and any work it queued */
	flush_work(&ci->work);
	KUNIT_EXPECT_EQ(test, 0, ei->early_ret);
	KUNIT_EXPECT_EQ(test, 0, ei->answer_ret);
	KUNIT_EXPECT_FALSE(test, completion_done(&ei->closed));
	KUNIT_EXPECT_FALSE(test, completion_done(&ei->error));
	lock_sock(csk);
	state = mpa_conn_state(ci);
	release_sock(csk);
	KUNIT_EXPECT_EQ(test, (u8)MPA_STATE_REJECTED, state);
}

/*
 * A peer announces a large FPDU and sends a few octets of it, to a
 * receive buffer so small that copy mode takes them out of TCP's queue:
 * the copy buffer holds about what came, not the span the peer announced,
 * which it could leave open for as long as it likes, on many connections,
 * outside TCP's memory accounting (copy mode starts when memory is short).
 */
static void kapi_copy_mode_announced(struct kunit *test)
{
	static const char req[] = "MPA ID Req Frame\x40\x01\x00\x00";
	static const struct mpa_kparams rp = { .role = MPA_ROLE_RESPONDER };
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *er = kapi_end_new(test);
	struct sock *ssk = pair->server->sk;
	u32 fill = 0, size = 0;
	unsigned long end;
	struct mpa_conn *cr;
	int k;

	lock_sock(ssk);
	WRITE_ONCE(ssk->sk_rcvbuf, SOCK_MIN_RCVBUF);
	ssk->sk_userlocks |= SOCK_RCVBUF_LOCK;
	release_sock(ssk);
	cr = kapi_attach(test, pair->server, &rp, er);
	KUNIT_ASSERT_EQ(test, 20, kapi_send_raw(pair->client, req, 20));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->established));
	/* ULPDU_Length 64768, then 6 of its octets: a segment each */
	tcp_sock_set_nodelay(pair->client->sk);
	KUNIT_ASSERT_EQ(test, 2, kapi_send_raw(pair->client, "\xfd\x00", 2));
	for (k = 0; k < 3; k++)
		KUNIT_ASSERT_EQ(test, 2, kapi_send_raw(pair->client, "ab", 2));
	/* the readiness signal: copy mode took all 8 octets */
	end = jiffies + KAPI_WAIT;
	while (time_before(jiffies, end)) {
		lock_sock(ssk);
		fill = cr->rx_cfill;
		size = cr->rx_csize;
		release_sock(ssk);
		if (fill == 8)
			break;
		usleep_range(1000, 2000);
	}
	KUNIT_ASSERT_EQ_MSG(test, 8U, fill, "copy mode took %u octets", fill);
	KUNIT_EXPECT_LE(test, size, (u32)SZ_4K);
}

/*
 * A peer answers before the Initiator's Request is all out (earlier stream
 * data fills TCP's send buffer, the peer reads none of it), then resets.
 * The startup was over and told (the reply callback, then established):
 * the reset is one in Full Operation. It used to fail the startup after
 * all: the reply callback ran a second time, and the connection left Full
 * Operation (FAILED).
 */
static void kapi_reply_before_request_out(struct kunit *test)
{
	static const char rep[] = "MPA ID Rep Frame\x40\x01\x00\x00";
	static const struct mpa_kparams ip = { .role = MPA_ROLE_INITIATOR };
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test);
	struct sock *csk = pair->client->sk;
	struct sock *ssk = pair->server->sk;
	struct mpa_conn *ci;
	u8 state;
	int ret;

	/* the peer reads none of the earlier stream data */
	KUNIT_ASSERT_EQ(test, 0, mpa_test_stuck_sender(pair->client,
						       pair->server));

	ci = kapi_attach(test, pair->client, &ip, ei);
	lock_sock(csk);
	ret = ci->tx_sent != ci->tx_len;
	release_sock(csk);
	KUNIT_ASSERT_TRUE_MSG(test, ret, "the Request went out");

	KUNIT_ASSERT_EQ(test, 20, kapi_send_raw(pair->server, rep, 20));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->established));
	KUNIT_EXPECT_EQ(test, 1, ei->replies);

	lock_sock(ssk);
	tcp_disconnect(ssk, 0);		/* a reset */
	release_sock(ssk);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->error));
	KUNIT_EXPECT_EQ(test, (u32)MPA_ERR_TCP_CLOSED, ei->err.code);
	KUNIT_EXPECT_EQ(test, ECONNRESET, ei->err.errnum);
	KUNIT_EXPECT_EQ(test, 1, ei->replies);
	lock_sock(csk);
	state = mpa_conn_state(ci);
	release_sock(csk);
	KUNIT_EXPECT_EQ(test, (u8)MPA_STATE_FULL, state);
}

/*
 * A consumer that refuses every ULPDU and resumes at once, from inside the
 * callback: MPA calls it again from its work, letting the socket go in
 * between (it used to call it again in a loop, the socket locked for
 * good). Once it takes the ULPDU, it has it.
 */
static void kapi_refuse_resume_loop(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	unsigned long end;
	struct mpa_conn *ci, *cr;

	er->refuse_resume = true;
	cr = kapi_attach(test, pair->server, &kapi_responder, er);
	ci = kapi_attach(test, pair->client, &kapi_initiator, ei);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->established));
	kapi_send_one(test, ci, 700, 'r');
	end = jiffies + KAPI_WAIT;
	while (READ_ONCE(er->refusals) < 100 && time_before(jiffies, end))
		msleep(20);
	KUNIT_ASSERT_LE(test, 100, READ_ONCE(er->refusals));
	/* the socket is let go between two calls */
	lock_sock(cr->sk);
	WRITE_ONCE(er->refuse_resume, false);
	release_sock(cr->sk);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, 700U, er->got_len);
	KUNIT_EXPECT_EQ(test, 'r', (int)er->got[699]);
}

static const struct mpa_kparams kapi_initiator_plain = {
	.role = MPA_ROLE_INITIATOR,
};

static const struct mpa_kparams kapi_responder_plain = {
	.role = MPA_ROLE_RESPONDER,
};

/* One small ULPDU of 16 octets @fill through the socket's sendmsg. */
static int kapi_sendmsg_small(struct socket *sock, int fill)
{
	struct msghdr msg = {};
	u8 buf[16];
	struct kvec kv = { .iov_base = buf, .iov_len = sizeof(buf) };

	memset(buf, fill, sizeof(buf));
	return kernel_sendmsg(sock, &msg, &kv, 1, sizeof(buf));
}

/*
 * A route without scatter-gather (TCP-MD5, or a device without it): TCP
 * copies what it is handed with MSG_SPLICE_PAGES into sk_page_frag(), the
 * calling task's page fragment. The run, handed to TCP when an ACK comes,
 * in softirq, must then not go to TCP there: it would be copied into the
 * fragment of whatever task that softirq interrupted (it was, and the
 * fragment's offset or page changed under that task). The work hands it
 * over instead, and every ULPDU arrives.
 */
static void kapi_run_without_sg(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct page_frag *pf = &current->task_frag;
	struct sock *csk = pair->client->sk;
	struct sock *ssk = pair->server->sk;
	struct mpa_conn *ci;
	struct page *page;
	u32 offset, run;
	int i, sent[3];

	kapi_attach(test, pair->server, &kapi_responder_plain, er);
	ci = kapi_attach(test, pair->client, &kapi_initiator_plain, ei);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->established));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->established));

	/*
	 * The Responder's socket owned here: what arrives waits in its
	 * backlog, unacknowledged. The first small FPDU goes out and stays
	 * in flight; Nagle's algorithm would hold the next two, which form
	 * the run.
	 */
	lock_sock_nested(ssk, SINGLE_DEPTH_NESTING);
	for (i = 0; i < 3; i++)
		sent[i] = kapi_sendmsg_small(pair->client, 'A' + i);
	lock_sock(csk);
	run = ci->tx_run.bv_len;
	csk->sk_route_caps &= ~NETIF_F_SG;
	release_sock(csk);
	if (!run)
		release_sock(ssk);	/* not with an assertion's exit */
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, 16, sent[i]);
	KUNIT_ASSERT_NE_MSG(test, 0U, run, "no run formed");

	/* The ACK's sk_write_space(), in softirq, on this task */
	page = pf->page;
	offset = pf->offset;
	local_bh_disable();
	bh_lock_sock(csk);
	csk->sk_write_space(csk);
	bh_unlock_sock(csk);
	local_bh_enable();
	KUNIT_EXPECT_PTR_EQ(test, page, pf->page);
	KUNIT_EXPECT_EQ(test, offset, pf->offset);

	release_sock(ssk);
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, 3, er->ulpdus);
	KUNIT_EXPECT_EQ(test, 16U, er->got_len);
	KUNIT_EXPECT_EQ(test, 'C', (int)er->got[15]);

	/* Without scatter-gather every FPDU goes as a record: it arrives */
	KUNIT_ASSERT_EQ(test, 16, kapi_sendmsg_small(pair->client, 'D'));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, 4, er->ulpdus);
	KUNIT_EXPECT_EQ(test, 'D', (int)er->got[0]);
}

/*
 * The Responder's consumer answers once the startup timeout ran out
 * (R-7.1.2-25, requirements A24), but before MPA's work, which the timer
 * queued, has the socket: the answer is late all the same (-ETIMEDOUT),
 * and the startup fails as at the timeout. It used to enter Full
 * Operation.
 */
static void kapi_answer_after_timeout(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct mpa_kparams rp = kapi_responder_plain;
	struct sock *ssk = pair->server->sk;
	bool fired = false;
	unsigned long end;
	struct mpa_conn *cr;
	u8 state;
	int ret;

	rp.timeout_ms = 200;
	er->accept_later = true;
	cr = kapi_attach(test, pair->server, &rp, er);
	kapi_attach(test, pair->client, &kapi_initiator_plain, ei);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->request));
	lock_sock(ssk);
	/* the readiness signal: the timer fired, its work waits for us */
	end = jiffies + KAPI_WAIT;
	while (!(fired = test_bit(MPA_EV_TIMEOUT, &cr->events)) &&
	       time_before(jiffies, end))
		msleep(20);
	ret = fired ? mpa_startup_answer(cr, false, NULL, 0) : -ENOSPC;
	state = mpa_conn_state(cr);
	release_sock(ssk);
	KUNIT_ASSERT_TRUE_MSG(test, fired, "the startup timer did not fire");
	KUNIT_EXPECT_EQ(test, -ETIMEDOUT, ret);
	KUNIT_EXPECT_EQ(test, (u8)MPA_STATE_FAILED, state);
	KUNIT_EXPECT_TRUE(test, kapi_wait(&er->error));
	KUNIT_EXPECT_EQ(test, (u32)MPA_REASON_TIMEOUT, er->err.reason);
	KUNIT_EXPECT_FALSE(test, completion_done(&er->established));
}

/*
 * The startup timer fires while the peer's Request, received in time,
 * waits behind the Responder's socket owner (this test here; a busy
 * worker alike): the work reads the Request before it looks at the timer,
 * and the startup goes on. It failed with reason TIMEOUT, the Request
 * unread.
 */
static void kapi_request_before_timeout(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct mpa_kparams rp = kapi_responder_plain;
	struct sock *ssk = pair->server->sk;
	struct mpa_conn *ci, *cr;
	bool queued = false, fired = false;
	unsigned long end;

	rp.timeout_ms = 200;
	cr = kapi_attach(test, pair->server, &rp, er);
	lock_sock_nested(ssk, SINGLE_DEPTH_NESTING);
	ci = mpa_kattach(pair->client, &kapi_initiator_plain, &kapi_ops, ei);
	end = jiffies + KAPI_WAIT;
	while (!IS_ERR(ci) && !(queued && fired) && time_before(jiffies, end)) {
		msleep(20);
		queued = READ_ONCE(ssk->sk_backlog.len) > 0;
		fired = test_bit(MPA_EV_TIMEOUT, &cr->events);
	}
	release_sock(ssk);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ci));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, kapi_detach,
							   ci));
	KUNIT_ASSERT_TRUE_MSG(test, queued, "the Request did not come");
	KUNIT_ASSERT_TRUE_MSG(test, fired, "the startup timer did not fire");

	KUNIT_EXPECT_TRUE(test, kapi_wait(&er->established));
	KUNIT_EXPECT_TRUE(test, kapi_wait(&ei->established));
	KUNIT_EXPECT_FALSE(test, completion_done(&er->error));
	KUNIT_EXPECT_EQ(test, 0U, cr->err.code);
}

/* A raw Initiator's Request: Rev 1, C=1, no Private Data */
static const u8 kapi_raw_request[MPA_FRAME_HDR_SIZE] = {
	'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
	'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e',
	0x40, 0x01, 0x00, 0x00,
};

/* The Responder @er failed with code 4, EARLY_DATA; no answer goes. */
static void kapi_expect_early_data(struct kunit *test, struct mpa_conn *cr,
				   struct kapi_end *er)
{
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->error));
	KUNIT_EXPECT_EQ(test, (u32)MPA_ERR_STARTUP, er->err.code);
	KUNIT_EXPECT_EQ(test, (u32)MPA_REASON_EARLY_DATA, er->err.reason);
	KUNIT_EXPECT_EQ(test, EPROTO, er->err.errnum);
	KUNIT_EXPECT_EQ(test, -EPROTO, mpa_kaccept(cr, NULL, 0));
	KUNIT_EXPECT_EQ(test, -EPROTO, mpa_kreject(cr, NULL, 0));
	KUNIT_EXPECT_EQ(test, MPA_STATE_FAILED, (int)mpa_conn_state(cr));
	KUNIT_EXPECT_FALSE(test, completion_done(&er->established));
	/* the startup object went with the startup, not at close */
	KUNIT_EXPECT_NULL(test, READ_ONCE(cr->st));
}

/*
 * Requirements A6: octets a raw Initiator sent behind its Request, with
 * it, before any Reply, fail the kernel Responder's startup at once: the
 * request callback never runs, the error callback tells code 4,
 * EARLY_DATA, EPROTO, and mpa_kaccept() and mpa_kreject() fail with
 * -EPROTO.
 */
static void kapi_early_data_with_request(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *er = kapi_end_new(test);
	u8 buf[MPA_FRAME_HDR_SIZE + 4];
	struct mpa_conn *cr;

	er->accept_later = true;
	cr = kapi_attach(test, pair->server, &kapi_responder_plain, er);
	memcpy(buf, kapi_raw_request, MPA_FRAME_HDR_SIZE);
	memcpy(buf + MPA_FRAME_HDR_SIZE, "FPDU", 4);
	KUNIT_ASSERT_EQ(test, (int)sizeof(buf),
			kapi_send_raw(pair->client, buf, sizeof(buf)));
	kapi_expect_early_data(test, cr, er);
	KUNIT_EXPECT_FALSE(test, completion_done(&er->request));
}

/*
 * The same octets after the Request, while the consumer judges it: the
 * startup fails as they arrive, before any answer (A6).
 */
static void kapi_early_data_while_judged(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *er = kapi_end_new(test);
	struct mpa_conn *cr;

	er->accept_later = true;
	cr = kapi_attach(test, pair->server, &kapi_responder_plain, er);
	KUNIT_ASSERT_EQ(test, MPA_FRAME_HDR_SIZE,
			kapi_send_raw(pair->client, kapi_raw_request,
				      MPA_FRAME_HDR_SIZE));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->request));
	KUNIT_ASSERT_EQ(test, 4, kapi_send_raw(pair->client, "FPDU", 4));
	kapi_expect_early_data(test, cr, er);
}

/*
 * The same octets arriving while the consumer's request callback runs,
 * inside the work, which owns the socket: TCP keeps them in the socket's
 * backlog, not its receive queue. mpa_kaccept() from the callback finds
 * them all the same (A6): -EPROTO, no Reply, code 4, EARLY_DATA.
 */
static void kapi_early_data_in_callback(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *er = kapi_end_new(test);
	struct mpa_conn *cr;

	/* the four octets go at once, not behind the Request's ACK */
	tcp_sock_set_nodelay(pair->client->sk);
	er->early = pair->client;
	init_completion(&er->early_sent);
	cr = kapi_attach(test, pair->server, &kapi_responder_plain, er);
	KUNIT_ASSERT_EQ(test, MPA_FRAME_HDR_SIZE,
			kapi_send_raw(pair->client, kapi_raw_request,
				      MPA_FRAME_HDR_SIZE));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->request));
	kapi_expect_early_data(test, cr, er);
	KUNIT_EXPECT_EQ(test, 4, er->early_ret);
	KUNIT_EXPECT_EQ(test, -EPROTO, er->answer_ret);
}

/* Two connected kernel ends, in Full Operation both ways. */
static struct mpa_conn *kapi_connect(struct kunit *test,
				     struct mpa_test_pair *pair,
				     struct kapi_end *ei, struct kapi_end *er,
				     struct mpa_conn **cr)
{
	struct mpa_conn *ci;

	*cr = kapi_attach(test, pair->server, &kapi_responder, er);
	ci = kapi_attach(test, pair->client, &kapi_initiator, ei);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->established));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->established));
	return ci;
}

static void kapi_kfree(void *p)
{
	kfree(p);
}

static void kapi_free_pages1(void *page)
{
	__free_pages(page, 1);
}

/*
 * Zero copy with pages TCP may not hold a reference to (sendpage_ok()):
 * the pages of an order-1 allocation that is not compound (the second has
 * no reference count of its own), whole or just across their boundary,
 * and slab memory (kmalloc()). Each ULPDU is copied instead: mpa_ksend()
 * returns 0 with done run already, so the memory may go at once, and the
 * peer gets the octets.
 */
static void kapi_send_copied_pages(struct kunit *test, struct kapi_end *ei,
				   struct kapi_end *er, struct mpa_conn *ci,
				   const struct bio_vec *bv, u32 len, u8 first,
				   u8 last)
{
	reinit_completion(&ei->tx_done);
	KUNIT_EXPECT_EQ(test, 0, mpa_ksend(ci, bv, 1, len, &ei->tx));
	KUNIT_EXPECT_TRUE(test, completion_done(&ei->tx_done));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, len, er->got_len);
	KUNIT_EXPECT_EQ(test, (int)first, (int)er->got[0]);
	KUNIT_EXPECT_EQ(test, (int)last, (int)er->got[len - 1]);
}

static void kapi_send_bad_pages(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct mpa_conn *ci, *cr;
	struct page *pages;
	struct bio_vec bv;
	u8 *p, *buf;

	ci = kapi_connect(test, pair, ei, er, &cr);
	ei->tx.done = kapi_tx_done;

	pages = alloc_pages(GFP_KERNEL, 1);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   kapi_free_pages1,
							   pages));
	p = page_address(pages);
	memset(p, 'p', 2 * PAGE_SIZE);
	p[5999] = 'q';
	p[PAGE_SIZE + 49] = 'x';
	bvec_set_page(&bv, pages, 6000, 0);
	kapi_send_copied_pages(test, ei, er, ci, &bv, 6000, 'p', 'q');
	bvec_set_page(&bv, pages, 100, PAGE_SIZE - 50);
	kapi_send_copied_pages(test, ei, er, ci, &bv, 100, 'p', 'x');

	buf = kmalloc(2000, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(buf, 'k', 2000);
	buf[1999] = 'z';
	bvec_set_virt(&bv, buf, 2000);
	reinit_completion(&ei->tx_done);
	KUNIT_EXPECT_EQ(test, 0, mpa_ksend(ci, &bv, 1, 2000, &ei->tx));
	if (completion_done(&ei->tx_done))
		kfree(buf);
	else
		kunit_add_action(test, kapi_kfree, buf);
	KUNIT_EXPECT_TRUE(test, completion_done(&ei->tx_done));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, 2000U, er->got_len);
	KUNIT_EXPECT_EQ(test, 'k', (int)er->got[0]);
	KUNIT_EXPECT_EQ(test, 'z', (int)er->got[1999]);

	/* an entry without its page: refused, nothing sent */
	bvec_set_page(&bv, NULL, 10, 0);
	KUNIT_EXPECT_EQ(test, -EINVAL, mpa_ksend(ci, &bv, 1, 10, &ei->tx));
	KUNIT_EXPECT_EQ(test, 3, er->ulpdus);
	KUNIT_EXPECT_FALSE(test, completion_done(&er->error));
	KUNIT_EXPECT_FALSE(test, completion_done(&ei->error));
}

static void kapi_free_compound(void *page)
{
	__free_pages(page, compound_order(page));
}

/* A compound allocation of 2^@order pages, freed at the end of the test */
static struct page *kapi_compound(struct kunit *test, unsigned int order)
{
	struct page *page = alloc_pages(GFP_KERNEL | __GFP_COMP, order);

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   kapi_free_compound,
							   page));
	return page;
}

/* net.ipv4.tcp_mtu_probing as it was before a test set it */
struct kapi_mtu_probing {
	struct net *net;
	u8 was;
};

static void kapi_mtu_probing_restore(void *data)
{
	struct kapi_mtu_probing *mp = data;

	WRITE_ONCE(mp->net->ipv4.sysctl_tcp_mtu_probing, mp->was);
}

/*
 * Where TCP may probe the path MTU, a ULPDU of pages TCP could hold is
 * copied all the same: TCP's probe (tcp_clone_payload()) keeps references
 * to the pages without the completion, so done would run while it still
 * sends from them. done has run when mpa_ksend() returns, and the peer
 * gets the octets. Without the copy, done waits for the peer's reading.
 */
static void kapi_send_mtu_probing(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct kapi_mtu_probing *mp;
	struct mpa_conn *ci, *cr;
	struct page *pages;
	struct bio_vec bv;
	u8 *p;

	ci = kapi_connect(test, pair, ei, er, &cr);
	ei->tx.done = kapi_tx_done;
	mp = kunit_kzalloc(test, sizeof(*mp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mp);
	mp->net = sock_net(ci->sk);
	mp->was = READ_ONCE(mp->net->ipv4.sysctl_tcp_mtu_probing);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  kapi_mtu_probing_restore,
						  mp));
	WRITE_ONCE(mp->net->ipv4.sysctl_tcp_mtu_probing, 2);

	pages = kapi_compound(test, 2);
	p = page_address(pages);
	memset(p, 'm', 3000);
	p[2999] = 't';
	bvec_set_page(&bv, pages, 3000, 0);
	kapi_send_copied_pages(test, ei, er, ci, &bv, 3000, 'm', 't');
}

/*
 * A multi-page entry of a compound allocation, starting past its first
 * page, goes by reference: the peer gets its octets, done runs once TCP
 * lets go of them.
 */
static void kapi_send_multipage(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	const u32 off = PAGE_SIZE + 100, len = 6000;
	struct mpa_conn *ci, *cr;
	struct page *pages;
	struct bio_vec bv;
	u8 *p;
	u32 i;

	ci = kapi_connect(test, pair, ei, er, &cr);
	ei->tx.done = kapi_tx_done;
	pages = kapi_compound(test, 2);
	p = page_address(pages);
	for (i = 0; i < 4 * PAGE_SIZE; i++)
		p[i] = i % 251;
	bvec_set_page(&bv, pages, len, off);
	KUNIT_EXPECT_EQ(test, 0, mpa_ksend(ci, &bv, 1, len, &ei->tx));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, len, er->got_len);
	KUNIT_EXPECT_EQ(test, 0, memcmp(er->got, p + off, len));
	KUNIT_EXPECT_TRUE(test, kapi_wait(&ei->tx_done));
	KUNIT_EXPECT_FALSE(test, completion_done(&er->error));
}

/*
 * One ULPDU per mpa_ktx at a time, on any connection: while TCP holds the
 * pages (the peer's socket owned here, no ACK comes) a second send with
 * it is refused with -EBUSY, on the same connection or, with @two, on
 * another one; once done ran, the same mpa_ktx serves again.
 */
static void kapi_ktx_busy_on(struct kunit *test, bool two)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct kapi_end *ei2 = ei, *er2 = er;
	struct sock *ssk = pair->server->sk;
	struct mpa_conn *c1, *c2, *cr;
	struct page *page;
	struct bio_vec bv;
	int first, second;

	c1 = kapi_connect(test, pair, ei, er, &cr);
	c2 = c1;
	if (two) {
		ei2 = kapi_end_new(test);
		er2 = kapi_end_new(test);
		c2 = kapi_connect(test, mpa_test_pair_new(test, AF_INET), ei2,
				  er2, &cr);
	}
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, kapi_free_page,
							   page));
	memset(page_address(page), 'b', PAGE_SIZE);
	bvec_set_page(&bv, page, 1000, 0);
	ei->tx.done = kapi_tx_done;

	lock_sock_nested(ssk, SINGLE_DEPTH_NESTING);
	first = mpa_ksend(c1, &bv, 1, 1000, &ei->tx);
	second = mpa_ksend(c2, &bv, 1, 1000, &ei->tx);
	release_sock(ssk);
	KUNIT_ASSERT_EQ(test, 0, first);
	KUNIT_EXPECT_EQ(test, -EBUSY, second);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->tx_done));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));

	reinit_completion(&ei->tx_done);
	KUNIT_ASSERT_EQ(test, 0, mpa_ksend(c2, &bv, 1, 1000, &ei->tx));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->tx_done));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er2->ulpdu));
	KUNIT_EXPECT_EQ(test, two ? 1 : 2, er->ulpdus);
	KUNIT_EXPECT_EQ(test, two ? 1 : 2, er2->ulpdus);
	KUNIT_EXPECT_EQ(test, 'b', (int)er2->got[999]);
}

static void kapi_ktx_busy(struct kunit *test)
{
	kapi_ktx_busy_on(test, false);
}

static void kapi_ktx_busy_two_conns(struct kunit *test)
{
	kapi_ktx_busy_on(test, true);
}

/*
 * An error from the ulpdu callback (-ENOMEM: no memory to place it) keeps
 * the ULPDU, as -EAGAIN does: after mpa_kresume() it comes again, whole,
 * and is counted once.
 */
static void kapi_ulpdu_error_keeps(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct mpa_conn *ci, *cr;

	ci = kapi_connect(test, pair, ei, er, &cr);
	er->fail_once = -ENOMEM;
	kapi_send_one(test, ci, 1500, 'm');
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->failed));
	msleep(50);
	KUNIT_EXPECT_FALSE(test, completion_done(&er->ulpdu));
	mpa_kresume(cr);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, 1, er->ulpdus);
	KUNIT_EXPECT_EQ(test, 1500U, er->got_len);
	KUNIT_EXPECT_EQ(test, 'm', (int)er->got[0]);
	KUNIT_EXPECT_EQ(test, 'm', (int)er->got[1499]);
	KUNIT_EXPECT_FALSE(test, completion_done(&er->error));
}

/* mpa_ulpdu_copy() to a source iterator: -EINVAL, no WARN, no octet. */
static void kapi_copy_to_source(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct mpa_conn *ci, *cr;

	ci = kapi_connect(test, pair, ei, er, &cr);
	er->source_iter = true;
	kapi_send_one(test, ci, 300, 's');
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, -EINVAL, er->source_ret);
	KUNIT_EXPECT_EQ(test, 0, er->copy_ret);
	KUNIT_EXPECT_EQ(test, 1, er->ulpdus);
	KUNIT_EXPECT_EQ(test, 's', (int)er->got[299]);
}

/*
 * mpa_kdetach() from the Initiator's reply callback: it returns (it hung,
 * waiting for the socket lock its own callback held), established does
 * not follow, and sending still works.
 */
static void kapi_detach_in_reply(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct mpa_result res;
	struct mpa_conn *ci;

	ei->detach_in_reply = true;
	kapi_attach(test, pair->server, &kapi_responder, er);
	ci = kapi_attach(test, pair->client, &kapi_initiator, ei);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->detached));
	/* takes the socket lock: the callbacks' run is over */
	KUNIT_ASSERT_EQ(test, 0, mpa_kresult(ci, &res));
	KUNIT_EXPECT_EQ(test, 1, ei->replies);
	KUNIT_EXPECT_FALSE(test, completion_done(&ei->established));
	KUNIT_EXPECT_FALSE(test, completion_done(&ei->error));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->established));
	kapi_send_one(test, ci, 700, 'r');
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, 700U, er->got_len);
	KUNIT_EXPECT_EQ(test, 'r', (int)er->got[699]);
}

/* TCP took the peer's FIN (tcp_fin(), which wakes the socket's waiters) */
static bool kapi_fin_in(const struct sock *sk)
{
	return READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN;
}

/*
 * mpa_kdetach() from the ulpdu callback, which took its ULPDU: no callback
 * follows, not for the next ULPDU nor for the peer's FIN behind it, and
 * that ULPDU stays in TCP's queue.
 */
static void kapi_detach_in_ulpdu(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct sock *ssk = pair->server->sk;
	struct mpa_conn *ci, *cr;
	struct mpa_result res;
	long left;

	ci = kapi_connect(test, pair, ei, er, &cr);
	er->detach_in_ulpdu = true;
	kapi_send_one(test, ci, 600, 'x');
	kapi_send_one(test, ci, 800, 'y');
	kernel_sock_shutdown(pair->client, SHUT_WR);
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->detached));
	/* the FIN, behind the second FPDU, reached the Responder's TCP */
	left = wait_event_interruptible_timeout(*sk_sleep(ssk),
						kapi_fin_in(ssk), KAPI_WAIT);
	KUNIT_ASSERT_GT(test, left, 0);
	/* whatever the data and the FIN queued has run */
	flush_work(&cr->work);
	KUNIT_ASSERT_EQ(test, 0, mpa_kresult(cr, &res));
	KUNIT_EXPECT_EQ(test, 1, er->ulpdus);
	KUNIT_EXPECT_EQ(test, 600U, er->got_len);
	KUNIT_EXPECT_EQ(test, 'x', (int)er->got[599]);
	KUNIT_EXPECT_FALSE(test, completion_done(&er->closed));
	KUNIT_EXPECT_FALSE(test, completion_done(&er->error));
	/* the second FPDU (and no more) is still TCP's */
	lock_sock(ssk);
	KUNIT_EXPECT_GT(test, tcp_inq(ssk), 800);
	KUNIT_EXPECT_LT(test, tcp_inq(ssk), 600 + 800);
	release_sock(ssk);
}

/*
 * The pair's ends attached as kapi_initiator and kapi_responder, but
 * without Markers, and in Full Operation; with @no_crc without CRCs too
 * (the namespace's policy allows it for the startup only). Return: the
 * Initiator's.
 */
static struct mpa_conn *kapi_full_no_markers(struct kunit *test,
					     struct mpa_test_pair *pair,
					     struct kapi_end *ei,
					     struct kapi_end *er, bool no_crc)
{
	struct mpa_kparams pi = kapi_initiator, pr = kapi_responder;
	struct net *net = sock_net(pair->client->sk);
	struct mpa_net_policy pol, saved;
	struct mpa_conn *ci;
	bool up;

	pi.markers = false;
	pr.markers = false;
	pi.no_crc = no_crc;
	pr.no_crc = no_crc;
	mpa_net_policy(net, &saved);
	pol = saved;
	pol.crc_off_allowed |= no_crc;
	mpa_net_policy_set(net, &pol);
	kapi_attach(test, pair->server, &pr, er);
	ci = kapi_attach(test, pair->client, &pi, ei);
	up = kapi_wait(&ei->established) && kapi_wait(&er->established);
	mpa_net_policy_set(net, &saved);
	KUNIT_ASSERT_TRUE(test, up);
	KUNIT_ASSERT_EQ(test, !no_crc, ci->params.crc);
	return ci;
}

static void kapi_send_fill(struct kunit *test, struct mpa_conn *c,
			   struct page *page, u32 len, int fill,
			   struct mpa_ktx *tx, int want)
{
	struct bio_vec bv;

	memset(page_address(page), fill, len);
	bvec_set_page(&bv, page, len, 0);
	KUNIT_EXPECT_EQ(test, want, mpa_ksend(c, &bv, 1, len, tx));
}

/*
 * TCP at its hard memory limit (tcp_mem[2]) with an skb still to send
 * (corked) and beyond tcp_wmem[0] queued, so that it forces nothing, and
 * only 100 octets of sk_forward_alloc beyond what joining that skb costs
 * (with @zc the skb holds a zero-copy send's pages alone, which TCP
 * charges in full before the skb grows): an FPDU that would join the skb
 * is not handed over in part (TCP would take the 100 octets, MPA could
 * not keep the rest, and reset the connection). The send fails with
 * -ENOMEM, nothing of it is sent (with @zc MPA keeps it instead, charged
 * to what the socket has left), and once memory is back it goes, the
 * stream intact. With @fits the socket has the FPDU's own octets left
 * besides, not a new skb's head: MPA queues the FPDU, charged to them,
 * and its push must not hand TCP the 100 octets either (TCP would put
 * the FPDU's head in a segment of its own, the rest in the next). With
 * @big CRCs are off and the last ULPDU is longer than a segment, for TCP
 * to copy (mpa_tx_copy()): TCP must not begin it either, for MPA, refused
 * the memory of the rest, would have to reset the connection. The send
 * buffer is locked large, so that the limit's "a socket over its send
 * buffer may go on" rule does not apply. The limits are global: for a
 * test guest only, as KUnit is.
 */
static void kapi_send_mem_limit_on(struct kunit *test, bool zc, bool fits,
				   bool big)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct sock *sk = pair->client->sk;
	unsigned long *pressure = sk->sk_prot->memory_pressure, was;
	long *mem = sk->sk_prot->sysctl_mem, saved[3];
	struct page *page = kapi_compound(test, 1);
	struct page *zpage = kapi_compound(test, 1);
	int delta, i, extra = 0, n = zc ? 2 : 3;
	struct page *cpage = page;
	struct mpa_fpdu_layout lo;
	struct sk_buff *tail;
	struct mpa_conn *ci;
	u32 seq, clen = 1000;

	/* no Markers: the zero-copy ULPDU goes whole, not copied */
	ci = kapi_full_no_markers(test, pair, ei, er, big);
	if (big) {
		cpage = kapi_compound(test, 4);
		clen = READ_ONCE(tcp_sk(sk)->mss_cache) + 1000;
		KUNIT_ASSERT_LE(test, clen, (u32)MPA_MAX_ULPDU);
	}
	mpa_fpdu_layout(&lo, 0, false, clen);
	ei->tx.done = kapi_tx_done;
	tcp_sock_set_cork(sk, true);
	if (zc) {
		kapi_send_fill(test, ci, zpage, 6000, 'B', &ei->tx, 0);
	} else {
		kapi_send_fill(test, ci, page, 100, 'A', NULL, 0);
		kapi_send_fill(test, ci, page, 6000, 'B', NULL, 0);
	}

	lock_sock(sk);
	/*
	 * The next FPDU joins the waiting skb, and no ACK can free memory.
	 * The corked skb stays: the probe timer that would send it after
	 * 200 ms (a slow guest may get there) is stopped.
	 */
	inet_csk_clear_xmit_timer(sk, ICSK_TIME_PROBE0);
	tail = tcp_write_queue_tail(sk);
	if (!tail || !tcp_skb_can_collapse_to(tail)) {
		release_sock(sk);
		KUNIT_FAIL(test, "no skb waiting to be joined");
		return;
	}
	KUNIT_EXPECT_EQ(test, zc, skb_zcopy_pure(tail));
	if (skb_zcopy_pure(tail))
		extra = tail->truesize - SKB_TRUESIZE(skb_end_offset(tail));
	KUNIT_EXPECT_TRUE(test, tcp_rtx_queue_empty(sk));
	KUNIT_EXPECT_GT(test, sk->sk_wmem_queued,
			READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_wmem[0]));
	sk->sk_userlocks |= SOCK_SNDBUF_LOCK;
	WRITE_ONCE(sk->sk_sndbuf, SZ_4M);
	/*
	 * Below any figure: the global one may read 0 (per-CPU reserves).
	 * Every TCP socket of the guest is refused memory meanwhile, and
	 * TCP enters memory pressure: the flag is put back as it was.
	 */
	was = READ_ONCE(*pressure);
	for (i = 0; i < 3; i++) {
		saved[i] = READ_ONCE(mem[i]);
		WRITE_ONCE(mem[i], -1);
	}
	/*
	 * 100 octets beyond what joining the skb costs; with @zc that is
	 * more than the socket has (delta < 0): the charge then adds
	 * forward allocation, and the uncharge below takes it back.
	 */
	delta = sk->sk_forward_alloc - extra - 100 - (fits ? lo.span : 0);
	sk_mem_charge(sk, delta);
	seq = tcp_sk(sk)->write_seq;
	release_sock(sk);

	/*
	 * Refused whole; with @zc the memory left after the skb's charge
	 * still holds the FPDU: MPA keeps it, for TCP once there is memory.
	 */
	kapi_send_fill(test, ci, cpage, clen, 'C', NULL,
		       zc || fits ? 0 : -ENOMEM);

	lock_sock(sk);
	/* nothing went out meanwhile: the case was the one described */
	KUNIT_EXPECT_EQ(test, 0U, tcp_sk(sk)->packets_out);
	/* TCP has none of the FPDU or all of it, not its head alone */
	seq = tcp_sk(sk)->write_seq - seq;
	KUNIT_EXPECT_TRUE_MSG(test, !seq || seq == lo.span,
			      "TCP took %u octets of an FPDU of %u", seq,
			      lo.span);
	sk_mem_uncharge(sk, delta);
	for (i = 0; i < 3; i++)
		WRITE_ONCE(mem[i], saved[i]);
	WRITE_ONCE(*pressure, was);
	release_sock(sk);
	KUNIT_EXPECT_FALSE(test, completion_done(&ei->error));

	if (!zc && !fits)
		kapi_send_fill(test, ci, cpage, clen, 'C', NULL, 0);
	tcp_sock_set_cork(sk, false);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, n, er->ulpdus);
	KUNIT_EXPECT_EQ(test, clen, er->got_len);
	KUNIT_EXPECT_EQ(test, 'C', (int)er->got[0]);
	KUNIT_EXPECT_EQ(test, 'C', (int)er->got[clen - 1]);
	KUNIT_EXPECT_FALSE(test, completion_done(&ei->error));
	KUNIT_EXPECT_FALSE(test, completion_done(&er->error));
	if (zc)
		KUNIT_EXPECT_TRUE(test, kapi_wait(&ei->tx_done));
}

static void kapi_send_mem_limit(struct kunit *test)
{
	kapi_send_mem_limit_on(test, false, false, false);
}

static void kapi_send_mem_limit_zc(struct kunit *test)
{
	kapi_send_mem_limit_on(test, true, false, false);
}

static void kapi_send_mem_limit_queued(struct kunit *test)
{
	kapi_send_mem_limit_on(test, false, true, false);
}

static void kapi_send_mem_limit_large(struct kunit *test)
{
	kapi_send_mem_limit_on(test, false, false, true);
}

/* skbs of @sk, sent or not, that hold octets of [@from, @to) */
static unsigned int kapi_skbs_over(struct sock *sk, u32 from, u32 to)
{
	struct sk_buff *skb = skb_rb_first(&sk->tcp_rtx_queue);
	unsigned int n = 0;

	for (; skb; skb = skb_rb_next(skb))
		n += before(TCP_SKB_CB(skb)->seq, to) &&
		     after(TCP_SKB_CB(skb)->end_seq, from);
	skb_queue_walk(&sk->sk_write_queue, skb)
		n += before(TCP_SKB_CB(skb)->seq, to) &&
		     after(TCP_SKB_CB(skb)->end_seq, from);
	return n;
}

/*
 * A zero-copy ULPDU of 16 entries, each on a page of its own, 1022 octets
 * (no PAD): with ULPDU_Length and the CRC its FPDU takes 18 skb
 * fragments, more than an skb holds (MAX_SKB_FRAGS, 17), though it fits
 * a segment. It goes whole in one skb (R-4.5-5, mpa_kmulpdu()'s promise):
 * copied. It was handed to TCP as it was, and TCP cut it where its skb
 * was full. The peer's socket is held meanwhile, so that no ACK frees
 * the skbs.
 */
static void kapi_send_many_frags(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct sock *sk = pair->client->sk, *ssk = pair->server->sk;
	struct bio_vec bv[16];
	struct mpa_conn *ci;
	unsigned int i, skbs;
	int ret;
	u32 end;

	ci = kapi_full_no_markers(test, pair, ei, er, false);
	for (i = 0; i < ARRAY_SIZE(bv); i++) {
		struct page *page = alloc_page(GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, page);
		KUNIT_ASSERT_EQ(test, 0,
				kunit_add_action_or_reset(test, kapi_free_page,
							  page));
		memset(page_address(page), 'a' + i, 64);
		bvec_set_page(&bv[i], page, i == ARRAY_SIZE(bv) - 1 ? 62 : 64,
			      0);
	}
	ei->tx.done = kapi_tx_done;

	lock_sock_nested(ssk, SINGLE_DEPTH_NESTING);
	tcp_sock_set_cork(sk, true);
	ret = mpa_ksend(ci, bv, ARRAY_SIZE(bv), 1022, &ei->tx);
	lock_sock(sk);
	end = tcp_sk(sk)->write_seq;
	skbs = kapi_skbs_over(sk, end - 1028, end);
	release_sock(sk);
	release_sock(ssk);
	tcp_sock_set_cork(sk, false);
	KUNIT_ASSERT_EQ(test, 0, ret);
	KUNIT_EXPECT_EQ_MSG(test, 1U, skbs, "the FPDU in %u skbs", skbs);

	KUNIT_ASSERT_TRUE(test, kapi_wait(&ei->tx_done));
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, 1022U, er->got_len);
	KUNIT_EXPECT_EQ(test, 'a', (int)er->got[0]);
	KUNIT_EXPECT_EQ(test, 'p', (int)er->got[1021]);
}

/*
 * 15 entries of 2000 octets, each across the two pages of a compound
 * allocation of its own: 32 small pages with ULPDU_Length and PAD + CRC,
 * but a fragment per compound page to MSG_ZEROCOPY, 17 in all, which an
 * skb holds. The FPDU fits a segment (loopback) and goes by reference:
 * done does not run while the peer's socket is held and no ACK comes.
 */
static void kapi_send_compound_zc(struct kunit *test)
{
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kapi_end *ei = kapi_end_new(test), *er = kapi_end_new(test);
	struct sock *sk = pair->client->sk, *ssk = pair->server->sk;
	const u32 off = PAGE_SIZE - 1000, len = 2000;
	struct bio_vec bv[15];
	struct mpa_conn *ci;
	unsigned int i;
	bool done;
	int ret;

	ci = kapi_full_no_markers(test, pair, ei, er, false);
	KUNIT_ASSERT_LE(test, (u32)ARRAY_SIZE(bv) * len + 8,
			READ_ONCE(tcp_sk(sk)->mss_cache));
	for (i = 0; i < ARRAY_SIZE(bv); i++) {
		struct page *pages = kapi_compound(test, 1);

		memset(page_address(pages) + off, 'a' + i, len);
		bvec_set_page(&bv[i], pages, len, off);
	}
	ei->tx.done = kapi_tx_done;

	lock_sock_nested(ssk, SINGLE_DEPTH_NESTING);
	ret = mpa_ksend(ci, bv, ARRAY_SIZE(bv), ARRAY_SIZE(bv) * len,
			&ei->tx);
	done = completion_done(&ei->tx_done);
	release_sock(ssk);
	KUNIT_ASSERT_EQ(test, 0, ret);
	KUNIT_EXPECT_FALSE_MSG(test, done, "copied, not sent by reference");
	KUNIT_ASSERT_TRUE(test, kapi_wait(&er->ulpdu));
	KUNIT_EXPECT_EQ(test, (u32)ARRAY_SIZE(bv) * len, er->got_len);
	KUNIT_EXPECT_EQ(test, 'a', (int)er->got[0]);
	KUNIT_EXPECT_EQ(test, 'o', (int)er->got[er->got_len - 1]);
	KUNIT_EXPECT_TRUE(test, kapi_wait(&ei->tx_done));
}

static struct kunit_case mpa_kapi_cases[] = {
	KUNIT_CASE(kapi_attach_args),
	KUNIT_CASE(kapi_send_args),
	KUNIT_CASE(kapi_exchange_ipv4),
	KUNIT_CASE(kapi_exchange_ipv6_large),
	KUNIT_CASE(kapi_exchange_paused),
	KUNIT_CASE(kapi_exchange_resumed_in_softirq),
	KUNIT_CASE(kapi_reject),
	KUNIT_CASE(kapi_two_initiators),
	KUNIT_CASE(kapi_accept_later),
	KUNIT_CASE(kapi_abort_in_ulpdu),
	KUNIT_CASE(kapi_refuse_after_reset),
	KUNIT_CASE(kapi_refuse_fpdu_in_backlog),
	KUNIT_CASE(kapi_refuse_in_writable),
	KUNIT_CASE(kapi_copy_mode_announced),
	KUNIT_CASE(kapi_reply_before_request_out),
	KUNIT_CASE(kapi_refuse_resume_loop),
	KUNIT_CASE(kapi_run_without_sg),
	KUNIT_CASE(kapi_request_before_timeout),
	KUNIT_CASE(kapi_answer_after_timeout),
	KUNIT_CASE(kapi_early_data_with_request),
	KUNIT_CASE(kapi_early_data_while_judged),
	KUNIT_CASE(kapi_early_data_in_callback),
	KUNIT_CASE(kapi_copy_to_source),
	KUNIT_CASE(kapi_ulpdu_error_keeps),
	KUNIT_CASE(kapi_ktx_busy),
	KUNIT_CASE(kapi_send_bad_pages),
	KUNIT_CASE(kapi_abort_in_ulpdu_refused),
	KUNIT_CASE(kapi_send_multipage),
	KUNIT_CASE(kapi_send_mtu_probing),
	KUNIT_CASE(kapi_detach_in_reply),
	KUNIT_CASE(kapi_detach_in_ulpdu),
	KUNIT_CASE(kapi_ktx_busy_two_conns),
	KUNIT_CASE(kapi_send_mem_limit),
	KUNIT_CASE(kapi_send_mem_limit_zc),
	KUNIT_CASE(kapi_send_mem_limit_queued),
	KUNIT_CASE(kapi_send_mem_limit_large),
	KUNIT_CASE(kapi_send_many_frags),
	KUNIT_CASE(kapi_send_compound_zc),
	{}
};

static struct kunit_suite mpa_kapi_suite = {
	.name = "mpa_kapi",
	.test_cases = mpa_kapi_cases,
};

kunit_test_suite(mpa_kapi_suite);
