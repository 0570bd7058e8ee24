//! The server line's rules worked by hand. Times are plain ns; calls are numbers whose
//! `sent` time is looked up in a table.

use super::*;

/// Take the next call at `now` from `line`, where call `i` joined at `sent[i]`: (served,
/// shed on the way).
fn take(
    rules: &ServerRules,
    line: &mut VecDeque<usize>,
    codel: &mut Codel,
    now: Time,
    sent: &[Time],
) -> (Option<usize>, Vec<usize>) {
    let mut shed = Vec::new();
    let got = take_next(rules, line, codel, now, |i: usize| sent.get(i).copied(), &mut shed);
    (got, shed)
}

#[test]
fn fifo_serves_the_oldest_and_lifo_the_newest() {
    let sent = [0, 1, 2, 3];
    for (lifo, order) in [(false, [0, 1, 2, 3]), (true, [3, 2, 1, 0])] {
        let rules = ServerRules { lifo, ..Default::default() };
        let mut line: VecDeque<usize> = (0..4).collect();
        let got: Vec<usize> =
            (0..4).map(|_| take(&rules, &mut line, &mut Codel::default(), 10, &sent).0.unwrap()).collect();
        assert_eq!(got, order, "lifo {lifo}");
    }
}

#[test]
fn a_stale_entry_is_skipped() {
    // Call 7 has no sending time (it left the line): the next live one is served.
    let sent = [0, 1];
    let mut line: VecDeque<usize> = [7, 1].into_iter().collect();
    assert_eq!(take(&ServerRules::default(), &mut line, &mut Codel::default(), 5, &sent), (Some(1), vec![]));
}

#[test]
fn max_wait_sheds_only_a_call_that_waited_longer() {
    // max_wait 10: call 0 waited 12 (shed), call 1 exactly 10 (served: "longer than").
    let rules = ServerRules { max_wait: Some(10), ..Default::default() };
    let sent = [0, 2, 11];
    let mut line: VecDeque<usize> = (0..3).collect();
    assert_eq!(take(&rules, &mut line, &mut Codel::default(), 12, &sent), (Some(1), vec![0]));
    // Under LIFO the newest (waited 1) is served and nothing is shed.
    let rules = ServerRules { lifo: true, max_wait: Some(10), ..Default::default() };
    let mut line: VecDeque<usize> = (0..3).collect();
    assert_eq!(take(&rules, &mut line, &mut Codel::default(), 12, &sent), (Some(2), vec![]));
    // Every call too old: all shed, none served.
    let mut line: VecDeque<usize> = (0..2).collect();
    let rules = ServerRules { max_wait: Some(5), ..Default::default() };
    assert_eq!(take(&rules, &mut line, &mut Codel::default(), 100, &sent), (None, vec![0, 1]));
}

/// CoDel with target 5 and interval 100 over calls that joined at `sent`, stepping through
/// RFC 8289 section 5's pseudocode (`dequeue`, `dodequeue`, `control_law`) by hand.
#[test]
fn codel_follows_the_rfc_8289_pseudocode() {
    let rules = ServerRules { codel: Some((5, 100)), ..Default::default() };
    let mut sent = vec![0; 10];
    sent.extend([400; 10]);
    let mut line: VecDeque<usize> = (0..10).collect();
    let mut c = Codel::default();
    // t = 10: call 0 waited 10 >= target with 9 left: first_above_time = 10 + interval; no
    // drop until the sojourn has stayed above target for an interval.
    assert_eq!(take(&rules, &mut line, &mut c, 10, &sent), (Some(0), vec![]));
    assert_eq!(c.first_above, Some(110));
    assert!(!c.dropping);
    // t = 110: still above: ok_to_drop; not dropping, so drop call 1, serve call 2, enter
    // the dropping state with count 1 and drop_next = control_law(110, 1) = 210.
    assert_eq!(take(&rules, &mut line, &mut c, 110, &sent), (Some(2), vec![1]));
    assert_eq!((c.dropping, c.count, c.last_count, c.drop_next), (true, 1, 1, 210));
    // t = 150: dropping, but before drop_next: serve.
    assert_eq!(take(&rules, &mut line, &mut c, 150, &sent), (Some(3), vec![]));
    // t = 210: drop call 4, count 2, serve call 5; drop_next = 210 + floor(100 / sqrt 2) = 280.
    assert_eq!(take(&rules, &mut line, &mut c, 210, &sent), (Some(5), vec![4]));
    assert_eq!((c.count, c.drop_next), (2, 280));
    // t = 280: drop call 6, count 3, serve 7; drop_next = 280 + floor(100 / sqrt 3) = 337.
    assert_eq!(take(&rules, &mut line, &mut c, 280, &sent), (Some(7), vec![6]));
    assert_eq!((c.count, c.drop_next), (3, 337));
    // t = 400: call 8 leaves one call queued (the RFC's `bytes() <= maxpacket_`): not ok to
    // drop, so the dropping state ends and call 8 is served.
    assert_eq!(take(&rules, &mut line, &mut c, 400, &sent), (Some(8), vec![]));
    assert!(!c.dropping);
    assert_eq!(c.first_above, None);
    // Ten more calls join at 400. t = 410: call 9 (waited 410) starts a new interval.
    line.extend(10..20);
    assert_eq!(take(&rules, &mut line, &mut c, 410, &sent), (Some(9), vec![]));
    assert_eq!(c.first_above, Some(510));
    // t = 510: re-entering soon after the last dropping state (510 - 337 < 16 intervals)
    // with delta = count - lastcount = 3 - 1 = 2 > 1: count restarts at 2, so drop_next =
    // 510 + floor(100 / sqrt 2) = 580.
    assert_eq!(take(&rules, &mut line, &mut c, 510, &sent), (Some(11), vec![10]));
    assert_eq!((c.dropping, c.count, c.last_count, c.drop_next), (true, 2, 2, 580));
}

#[test]
fn codel_leaves_a_call_below_target_alone_and_an_empty_line_resets_it() {
    let rules = ServerRules { codel: Some((5, 100)), ..Default::default() };
    let sent = [0, 0, 0, 0, 198];
    let mut line: VecDeque<usize> = (0..5).collect();
    let mut c = Codel::default();
    assert_eq!(take(&rules, &mut line, &mut c, 10, &sent).0, Some(0));
    assert_eq!(c.first_above, Some(110));
    // Under LIFO-free FIFO, call 1 at t = 200 is ok to drop; a line whose head waited
    // under target is not: call 4 (waited 2) under LIFO.
    let lifo = ServerRules { lifo: true, ..rules };
    assert_eq!(take(&lifo, &mut line, &mut c, 200, &sent), (Some(4), vec![]));
    assert_eq!(c.first_above, None, "below target resets first_above_time");
    let mut empty = VecDeque::new();
    c.first_above = Some(1);
    assert_eq!(take(&rules, &mut empty, &mut c, 300, &sent), (None, vec![]));
    assert_eq!(c.first_above, None, "an empty queue is below target");
}
