//! nginx's rules worked by hand, one test per rule, each naming the nginx 1.31 source file
//! and function it follows.

use super::*;
use crate::engine::MILLISECOND as MS;

fn limit_req(rate: NginxRate, burst: u32, nodelay: bool, delay: u32) -> Box<dyn Policy> {
    NginxLimitReqConfig { rate, burst, nodelay, delay, status: 503 }.build(&BuildCtx::new(vec!["a".into()]))
}

/// The answers to `n` requests arriving together at `now`, ids from `first`.
fn together(p: &mut dyn Policy, now: Time, first: u64, n: u64) -> Vec<Admission> {
    (first..first + n).map(|id| p.admit(&Attempt::new(now, 0, id))).collect()
}

const REFUSED: Admission = Admission::Refuse(Refusal::Unavailable);
const DELAYED: Admission = Admission::Wait { max_wait: Time::MAX };

#[test]
fn limit_req_lookup_admits_the_first_plus_burst_and_refuses_the_rest() {
    // ngx_http_limit_req_module.c, ngx_http_limit_req_lookup: the first request creates the
    // node with excess 0; the k-th after it has excess k * 1000; burst=20 is 20000, so the
    // 21st after the first (excess 21000) is NGX_BUSY. 30 at once, 50r/s burst=20 nodelay:
    // 21 admitted, 9 refused with limit_req_status (503 by default).
    let mut p = limit_req(NginxRate::PerSecond(50), 20, true, 0);
    let got = together(p.as_mut(), 0, 0, 30);
    assert_eq!(got.iter().filter(|a| **a == Admission::Admit).count(), 21);
    assert_eq!(&got[..21], &[Admission::Admit; 21]);
    assert_eq!(&got[21..], &[REFUSED; 9]);
}

#[test]
fn limit_req_account_delays_each_request_in_excess_by_excess_over_rate() {
    // ngx_http_limit_req_account: without nodelay (delay 0), delay = excess * 1000 / rate ms:
    // at 50r/s (rate 50000) the k-th request after the first waits k * 1000 * 1000 / 50000 =
    // 20 k ms. The first goes on at once, the other 20 are delayed 20 ms apart, 9 refused.
    let mut p = limit_req(NginxRate::PerSecond(50), 20, false, 0);
    let got = together(p.as_mut(), 0, 0, 30);
    assert_eq!(got[0], Admission::Admit);
    assert_eq!(&got[1..21], &[DELAYED; 20]);
    assert_eq!(&got[21..], &[REFUSED; 9]);
    // It asks to be woken when the first delay is over, and lets each one go at its time.
    assert_eq!(p.status().wake_at, Some(20 * MS));
    for k in 1..=20u64 {
        let a = Attempt::new(20 * k * MS - 1, 0, k);
        assert_eq!(p.admit(&a), DELAYED, "request {k} before its delay");
        let a = Attempt::new(20 * k * MS, 0, k);
        assert_eq!(p.admit(&a), Admission::Admit, "request {k} at {} ms", 20 * k);
        assert_eq!(p.status().wake_at, if k < 20 { Some(20 * (k + 1) * MS) } else { None });
    }
}

#[test]
fn limit_req_delay_lets_the_first_delay_requests_in_excess_go_at_once() {
    // ngx_http_limit_req (delay=N is N * 1000) and ngx_http_limit_req_account: a request
    // with excess <= delay goes on at once, beyond it waits (excess - delay) * 1000 / rate.
    // 50r/s burst=20 delay=8: the first and 8 more at once, the 9th after the first waits
    // (9000 - 8000) * 1000 / 50000 = 20 ms, the 20th (20000 - 8000) / 50 = 240 ms.
    let mut p = limit_req(NginxRate::PerSecond(50), 20, false, 8);
    let got = together(p.as_mut(), 0, 0, 21);
    assert_eq!(&got[..9], &[Admission::Admit; 9]);
    assert_eq!(&got[9..], &[DELAYED; 12]);
    assert_eq!(p.status().wake_at, Some(20 * MS));
    assert_eq!(p.admit(&Attempt::new(240 * MS - 1, 0, 20)), DELAYED);
    assert_eq!(p.admit(&Attempt::new(240 * MS, 0, 20)), Admission::Admit);
}

#[test]
fn limit_req_lookup_leaks_rate_times_whole_milliseconds() {
    // ngx_http_limit_req_lookup: excess = excess - rate * ms / 1000 + 1000, ms in whole
    // milliseconds of ngx_current_msec. After 21 at 0 (excess 20000) at 50r/s: at 19.999 ms
    // (ms 19) excess = 20000 - 950 + 1000 = 20050 > 20000, refused; at 20 ms 20000, admitted;
    // a second one at 20 ms (ms 0 since) 21000, refused.
    let mut p = limit_req(NginxRate::PerSecond(50), 20, true, 0);
    together(p.as_mut(), 0, 0, 21);
    assert_eq!(p.admit(&Attempt::new(20 * MS - 1, 0, 100)), REFUSED);
    assert_eq!(p.admit(&Attempt::new(20 * MS, 0, 101)), Admission::Admit);
    assert_eq!(p.admit(&Attempt::new(20 * MS, 0, 102)), REFUSED);
    // Idle for a second: excess floors at 0 and the next has 0 - 50000 + 1000 < 0 -> 0, so
    // again 21 pass at once (the node is not new, but the floor gives the same).
    let got = together(p.as_mut(), 1020 * MS, 200, 22);
    assert_eq!(got.iter().filter(|a| **a == Admission::Admit).count(), 21);
}

#[test]
fn limit_req_zone_keeps_per_minute_rates_in_thousandths() {
    // ngx_http_limit_req_zone: rate = n * 1000 / 60 for r/m: 30r/m is 500 thousandths per
    // second, one request per 2 s; 7r/m is 116 (7000 / 60, rounded down).
    assert_eq!(NginxRate::PerMinute(30).milli_per_s(), 500);
    assert_eq!(NginxRate::PerMinute(7).milli_per_s(), 116);
    assert_eq!(NginxRate::PerSecond(50).milli_per_s(), 50_000);
    // 30r/m, no burst: the first passes, the next only 2 s later (excess 1000 - 500 * 2000
    // / 1000 = 0 <= 0); at 1.999 s it is 1000 - 999 + 1000 = 1001 > 0, refused.
    let mut p = limit_req(NginxRate::PerMinute(30), 0, true, 0);
    assert_eq!(p.admit(&Attempt::new(0, 0, 0)), Admission::Admit);
    assert_eq!(p.admit(&Attempt::new(1999 * MS, 0, 1)), REFUSED);
    assert_eq!(p.admit(&Attempt::new(2000 * MS, 0, 2)), Admission::Admit);
}

#[test]
fn limit_req_status_answers_429_or_503() {
    // ngx_http_limit_req_merge_conf: status_code defaults to NGX_HTTP_SERVICE_UNAVAILABLE;
    // limit_req_status 429 answers 429 (brownout's `rejected`).
    let cfg = |status| NginxLimitReqConfig { rate: NginxRate::PerSecond(1), burst: 0, nodelay: true, delay: 0, status };
    for (status, refusal) in [(503, Refusal::Unavailable), (429, Refusal::Rejected)] {
        let mut p = cfg(status).build(&BuildCtx::new(vec!["a".into()]));
        assert_eq!(together(p.as_mut(), 0, 0, 2)[1], Admission::Refuse(refusal));
        assert_eq!(p.refusal(0), refusal);
    }
    assert!(cfg(502).validate(&[]).is_err());
    let both = NginxLimitReqConfig { nodelay: true, delay: 3, ..cfg(503) };
    assert!(both.validate(&[]).unwrap_err().to_string().contains("NginxLimitReq.delay"));
}

#[test]
fn a_delayed_request_that_ends_is_forgotten_but_its_excess_stays() {
    // ngx_http_limit_req_account stores the excess at admission; a request that goes away
    // while delayed gives nothing back. Two at once at 50r/s burst=5: the second is delayed
    // to 20 ms and leaves at 5 ms; a third at 5 ms still counts the second's excess.
    let mut p = limit_req(NginxRate::PerSecond(50), 5, false, 0);
    together(p.as_mut(), 0, 0, 2);
    p.left_queue(&Attempt::new(5 * MS, 0, 1));
    assert_eq!(p.status().wake_at, None);
    assert_eq!(p.admit(&Attempt::new(5 * MS, 0, 2)), DELAYED);
    // excess 2000 - 50 * 5 = 1750 at 5 ms: 1750 * 1000 / 50000 = 35 ms later.
    assert_eq!(p.status().wake_at, Some(40 * MS));
}

fn upstream(max_conns: u32, servers: u32, tries: u32, next: Vec<NextUpstream>) -> NginxUpstreamConfig {
    NginxUpstreamConfig {
        max_conns,
        servers,
        proxy_read_timeout: Dur::ms(500),
        proxy_next_upstream: next,
        proxy_next_upstream_tries: tries,
        proxy_next_upstream_timeout: None,
        proxy_connect_timeout: None,
        keepalive: 0,
        keepalive_timeout: Dur::ms(60_000),
        keepalive_requests: 1000,
    }
}

#[test]
fn max_conns_is_a_limiter_of_their_sum_answering_502_and_read_timeout_starts_at_the_connection() {
    // ngx_http_upstream_round_robin.c, ngx_http_upstream_get_round_robin_peer: every server
    // at max_conns is NGX_BUSY; ngx_http_upstream.c, ngx_http_upstream_connect: "no live
    // upstreams", ngx_http_upstream_next(FT_NOLIVE), finalized 502 (NGX_HTTP_BAD_GATEWAY).
    // One server: one try, so no retry layer whatever proxy_next_upstream says.
    let layers = upstream(20, 1, 1, error_timeout()).expand();
    assert_eq!(layers.len(), 2, "{layers:?}");
    let PolicySpec::Limiter(l) = &layers[0] else { panic!("{layers:?}") };
    assert_eq!((l.permits, l.queue, l.refuse_as), (20, 0, RefuseAs::BadGateway));
    let PolicySpec::Timeout(t) = &layers[1] else { panic!("{layers:?}") };
    // An inactivity timeout (re-armed between reads by ngx_event_pipe): with no body
    // transfer time, the Connection start.
    assert_eq!((t.timeout, t.starts), (Dur::ms(500), TimeoutStart::Inactivity));
    // Three servers: round robin skips the full ones (ngx_http_upstream_get_peer), so the
    // limit is 3 x 20.
    let PolicySpec::Limiter(l) = &upstream(20, 3, 1, error_timeout()).expand()[0] else { panic!() };
    assert_eq!(l.permits, 60);
    // max_conns 0: no limit, the timeout alone.
    assert_eq!(upstream(0, 1, 0, error_timeout()).expand().len(), 1);
}

#[test]
fn tries_are_the_servers_capped_by_next_upstream_tries() {
    // ngx_http_upstream_init_round_robin_peer: peer.tries = the servers;
    // ngx_http_upstream_init_request: lowered to next_upstream_tries when that is set.
    assert_eq!(upstream(1, 3, 0, error_timeout()).tries(), 3);
    assert_eq!(upstream(1, 3, 2, error_timeout()).tries(), 2);
    assert_eq!(upstream(1, 3, 5, error_timeout()).tries(), 3);
    assert_eq!(upstream(1, 1, 0, error_timeout()).tries(), 1);
}

#[test]
fn proxy_next_upstream_kinds_map_onto_the_retry_predicates() {
    // ngx_http_upstream_next: a failure is passed on only when its kind is in next_upstream
    // and tries are left; a 502 "no live upstreams" (FT_NOLIVE) never is.
    let retry = |next| match &upstream(1, 3, 0, next).expand()[0] {
        PolicySpec::Retry(r) => (r.max_attempts, r.on_error, r.on_timeout, r.on_refusal.clone(), r.backoff),
        other => panic!("{other:?}"),
    };
    assert_eq!(retry(error_timeout()), (3, true, true, vec![], Dur(0)));
    assert_eq!(retry(vec![NextUpstream::Timeout]), (3, false, true, vec![], Dur(0)));
    assert_eq!(retry(vec![NextUpstream::Http500]), (3, true, false, vec![], Dur(0)));
    assert_eq!(retry(vec![NextUpstream::Http503]), (3, false, false, vec![Refused::Dependency503], Dur(0)));
    // `off` (an empty list): no retry layer.
    assert!(!matches!(upstream(1, 3, 0, vec![]).expand()[0], PolicySpec::Retry(_)));
}

#[test]
fn limit_conn_is_a_limiter_with_no_queue() {
    // ngx_http_limit_conn_module.c, ngx_http_limit_conn_handler: refused when the key holds
    // `conn` already (lc->conn >= limits[i].conn), with limit_conn_status (503 by default,
    // ngx_http_limit_conn_merge_conf); nothing waits.
    let l = limit_conn(2, 503);
    assert_eq!((l.permits, l.queue, l.refuse_as), (2, 0, RefuseAs::Unavailable));
    assert_eq!(limit_conn(2, 429).refuse_as, RefuseAs::Rejected);
    let mut p = PolicySpec::Limiter(l).build(&BuildCtx::new(vec!["a".into()]));
    assert_eq!(together(p.as_mut(), 0, 0, 3)[2], REFUSED);
}
