/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the twheel facility, in the style of
 * include/trace/events/timer.h: /sys/kernel/tracing/events/twheel/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM twheel

#if !defined(_TWHEEL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TWHEEL_TRACE_H

#include <linux/tracepoint.h>
#include <linux/twheel.h>

/*
 * twheel_timer_start and twheel_timer_modify share one layout:
 * @timer:   the timer
 * @expires: requested expiry (CLOCK_MONOTONIC ns)
 * @slack:   allowed lateness in ns
 * @key:     tick the timer is queued for
 * @was_pending: the timer was pending before (modify only; start refuses
 *           a pending timer)
 */
DECLARE_EVENT_CLASS(twheel_timer_arm,
		    TP_PROTO(struct twheel_timer *timer, ktime_t expires, u64 slack,
			     u64 key, bool was_pending),
		    TP_ARGS(timer, expires, slack, key, was_pending),
		    TP_STRUCT__entry(__field(void *, timer)
				     __field(void *, function)
				     __field(s64, expires)
				     __field(u64, slack)
				     __field(u64, key)
				     __field(bool, was_pending)),
		    TP_fast_assign(__entry->timer = timer;
				   __entry->function = timer->function;
				   __entry->expires = expires;
				   __entry->slack = slack;
				   __entry->key = key;
				   __entry->was_pending = was_pending;),
		    TP_printk("timer=%p function=%ps expires=%lld slack=%llu tick=%llu%s",
			      __entry->timer, __entry->function, __entry->expires,
			      __entry->slack, __entry->key,
			      __entry->was_pending ? " was_pending" : "")
);

/* twheel_timer_start() armed an idle timer. */
DEFINE_EVENT(twheel_timer_arm, twheel_timer_start,
	     TP_PROTO(struct twheel_timer *timer, ktime_t expires, u64 slack,
		      u64 key, bool was_pending),
	     TP_ARGS(timer, expires, slack, key, was_pending)
);

/* twheel_timer_modify() (re)armed a timer, pending or not. */
DEFINE_EVENT(twheel_timer_arm, twheel_timer_modify,
	     TP_PROTO(struct twheel_timer *timer, ktime_t expires, u64 slack,
		      u64 key, bool was_pending),
	     TP_ARGS(timer, expires, slack, key, was_pending)
);

/**
 * twheel_timer_cancel - a pending timer was cancelled
 * @timer: the timer
 */
TRACE_EVENT(twheel_timer_cancel,
	    TP_PROTO(struct twheel_timer *timer),
	    TP_ARGS(timer),
	    TP_STRUCT__entry(__field(void *, timer)),
	    TP_fast_assign(__entry->timer = timer;),
	    TP_printk("timer=%p", __entry->timer)
);

/**
 * twheel_timer_expire - a timer's callback is about to run
 * @timer:    the timer
 * @expires:  its requested expiry
 * @lateness: ns from @expires to now (never negative: no early fires)
 */
TRACE_EVENT(twheel_timer_expire,
	    TP_PROTO(struct twheel_timer *timer, ktime_t expires, s64 lateness),
	    TP_ARGS(timer, expires, lateness),
	    TP_STRUCT__entry(__field(void *, timer)
			     __field(void *, function)
			     __field(s64, expires)
			     __field(s64, lateness)),
	    TP_fast_assign(__entry->timer = timer;
			   __entry->function = timer->function;
			   __entry->expires = expires;
			   __entry->lateness = lateness;),
	    TP_printk("timer=%p function=%ps expires=%lld lateness=%lld",
		      __entry->timer, __entry->function, __entry->expires,
		      __entry->lateness)
);

/**
 * twheel_tick - the tick handler of a base advanced its engine
 * @wheel: the instance (the device's default wheel and in-kernel users'
 *         own instances tick side by side, and their bases share indices)
 * @base:  index of the base (its CPU; 0 for a single-base instance)
 * @clk:   first tick not processed before the advance
 * @upto:  first tick not over yet
 * @slot:  slot of @clk
 * @fired: timers handed out for their callbacks
 */
TRACE_EVENT(twheel_tick,
	    TP_PROTO(struct twheel *wheel, unsigned int base, u64 clk, u64 upto,
		     u64 slot, unsigned int fired),
	    TP_ARGS(wheel, base, clk, upto, slot, fired),
	    TP_STRUCT__entry(__field(void *, wheel)
			     __field(unsigned int, base)
			     __field(u64, clk)
			     __field(u64, upto)
			     __field(u64, slot)
			     __field(unsigned int, fired)),
	    TP_fast_assign(__entry->wheel = wheel;
			   __entry->base = base;
			   __entry->clk = clk;
			   __entry->upto = upto;
			   __entry->slot = slot;
			   __entry->fired = fired;),
	    TP_printk("wheel=%p base=%u clk=%llu upto=%llu slot=%llu fired=%u",
		      __entry->wheel, __entry->base, __entry->clk, __entry->upto,
		      __entry->slot, __entry->fired)
);

#endif /* _TWHEEL_TRACE_H */

/* Out of tree: the header sits beside the .c file that creates the events. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE twheel_trace
#include <trace/define_trace.h>
