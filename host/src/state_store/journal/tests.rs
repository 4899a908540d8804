use super::*;

fn pad(plugin: &str) -> PadKey {
    PadKey {
        scope: "s".into(),
        plugin: plugin.into(),
    }
}

fn fresh(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hak-journal-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The journal appends go to now.
fn newest_journal(dir: &Path) -> PathBuf {
    let (_, journals, _) = generations(dir).unwrap();
    journal_path(dir, *journals.last().unwrap())
}

fn append_raw(path: &Path, bytes: &[u8]) {
    let mut f = File::options().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

#[test]
fn state_survives_reopening_and_a_torn_last_line() {
    let dir = fresh("torn");
    let pad = pad("p");
    let now = 1_000_000_000;
    {
        let j = JournalBackend::open(&dir).unwrap();
        j.set(&pad, "k", "v", 100).unwrap();
        let Reserved::Granted { id: a, .. } = j.reserve(&pad, "b", 4, 10, 60, now).unwrap() else {
            panic!()
        };
        let Reserved::Granted { id: b, .. } = j.reserve(&pad, "b", 3, 10, 60, now).unwrap() else {
            panic!()
        };
        j.settle(&[a], true).unwrap();
        j.settle(&[b], false).unwrap();
        let Reserved::Granted { .. } = j.reserve(&pad, "b", 2, 10, 60, now).unwrap() else {
            panic!()
        };
    }
    // A process killed mid-write leaves half a line.
    append_raw(&newest_journal(&dir), b"{\"t\":\"res\",\"id\":99,\"s\"");
    let j = JournalBackend::open(&dir).unwrap();
    assert_eq!(j.get(&pad, "k").unwrap().as_deref(), Some("v"));
    // 4 committed + 2 unsettled (counted): 6 of 10.
    assert_eq!(j.spent(&pad, "b", 60, now).unwrap(), 6);
    assert_eq!(
        j.reserve(&pad, "b", 5, 10, 60, now).unwrap(),
        Reserved::OverLimit { spent: 6 }
    );
    drop(j);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Three spends of a limit-3 budget, then the journal as a bad line left it.
fn spent_three_then(
    name: &str,
    damage: impl Fn(&Path),
) -> (PathBuf, Result<JournalBackend, String>) {
    let dir = fresh(name);
    let now = 1_000_000_000;
    {
        let j = JournalBackend::open(&dir).unwrap();
        for _ in 0..3 {
            let Reserved::Granted { id, .. } = j.reserve(&pad("p"), "n", 1, 3, 60, now).unwrap()
            else {
                panic!()
            };
            j.settle(&[id], true).unwrap();
        }
    }
    damage(&newest_journal(&dir));
    let opened = JournalBackend::open(&dir);
    (dir, opened)
}

#[test]
fn an_unreadable_line_anywhere_but_a_torn_tail_refuses_to_open_and_keeps_the_files() {
    // First line bad (what reset a limit-3 budget before: replay stopped there).
    let (dir, opened) = spent_three_then("bad-first", |path| {
        let old = std::fs::read(path).unwrap();
        let mut bad = b"{not a record}\n".to_vec();
        bad.extend(old);
        std::fs::write(path, bad).unwrap();
    });
    let err = opened.err().expect("a bad first line must refuse to open");
    assert!(err.contains("line 1: unreadable state record"), "{err}");
    assert!(err.contains("journal."), "{err}");
    // Nothing was rewritten: opening again refuses again, and the spends are still there.
    assert!(JournalBackend::open(&dir).is_err());
    let text = std::fs::read_to_string(newest_journal(&dir)).unwrap();
    assert_eq!(text.matches("\"res\"").count(), 3, "{text}");
    let _ = std::fs::remove_dir_all(&dir);

    // A complete last line that is not a record.
    let (dir, opened) = spent_three_then("bad-last", |path| append_raw(path, b"garbage\n"));
    let err = opened
        .err()
        .expect("a complete bad last line must refuse to open");
    // Three reservations and their three commits, then the bad line.
    assert!(err.contains("line 7: unreadable state record"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);

    // A bad line in a snapshot (complete by construction) refuses too.
    let (dir, opened) = spent_three_then("bad-snapshot", |_| {});
    drop(opened.unwrap());
    let (snapshots, _, _) = generations(&dir).unwrap();
    append_raw(&snapshot_path(&dir, *snapshots.last().unwrap()), b"{\"t\":");
    let err = JournalBackend::open(&dir)
        .err()
        .expect("a torn snapshot refuses");
    assert!(err.contains("snapshot."), "{err}");
    let _ = std::fs::remove_dir_all(&dir);

    // Only a torn tail is dropped: the three spends stay, the budget stays spent.
    let (dir, opened) = spent_three_then("torn-tail", |path| append_raw(path, b"{\"t\":\"rel\""));
    let j = opened.unwrap();
    assert_eq!(
        j.reserve(&pad("p"), "n", 1, 3, 60, 1_000_000_000).unwrap(),
        Reserved::OverLimit { spent: 3 }
    );
    drop(j);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_earlier_layouts_journal_is_replayed_then_replaced() {
    let dir = fresh("legacy");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("journal"),
        "{\"t\":\"set\",\"s\":\"s\",\"p\":\"p\",\"k\":\"k\",\"v\":\"v\"}\n",
    )
    .unwrap();
    let j = JournalBackend::open(&dir).unwrap();
    assert_eq!(j.get(&pad("p"), "k").unwrap().as_deref(), Some("v"));
    assert!(!dir.join("journal").exists());
    drop(j);
    let j = JournalBackend::open(&dir).unwrap();
    assert_eq!(j.get(&pad("p"), "k").unwrap().as_deref(), Some("v"));
    drop(j);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn appends_stay_one_record_however_large_the_state_and_compaction_keeps_everything() {
    let dir = fresh("growth");
    let n = 20_000;
    {
        // A 4 KiB threshold: the old store rewrote the whole state on every append past it.
        let j = JournalBackend::open_tuned(&dir, Quota::default(), 4096).unwrap();
        for i in 0..n {
            j.set(&pad("p"), &format!("key-{i}"), "v", usize::MAX)
                .unwrap();
        }
        j.finish_compaction();
        let done = j.compaction.done.load(Ordering::Relaxed);
        // The journal grows past the snapshot before it is compacted again: a number of
        // snapshots logarithmic in the appends, not one per append.
        assert!((3..=16).contains(&done), "{done} snapshots for {n} appends");
    }
    let (snapshots, journals, _) = generations(&dir).unwrap();
    assert!(
        snapshots.len() <= 2 && journals.len() <= 2,
        "{snapshots:?} {journals:?}"
    );
    let j = JournalBackend::open(&dir).unwrap();
    for i in [0, n / 2, n - 1] {
        assert_eq!(
            j.get(&pad("p"), &format!("key-{i}")).unwrap().as_deref(),
            Some("v")
        );
    }
    drop(j);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_plugin_past_its_quota_is_refused_alone_and_the_quota_survives_a_restart() {
    let dir = fresh("quota");
    let quota = Quota {
        plugin_bytes: 10_000,
        total_bytes: 1 << 20,
    };
    let scoped = |scope: usize, plugin: &str| PadKey {
        scope: format!("ctx-{scope}").into(),
        plugin: plugin.into(),
    };
    {
        let j = JournalBackend::open_with(&dir, quota).unwrap();
        // Many contexts, each within its own 64 KiB pad: the plugin's quota stops them.
        let mut refused = None;
        'fill: for scope in 0..60 {
            for i in 0..100 {
                if let Err(e) = j.set(&scoped(scope, "greedy"), &format!("k{i}"), "v", 65_536) {
                    refused = Some(e);
                    break 'fill;
                }
            }
        }
        let Some(StateError::Full(e)) = refused else {
            panic!("the quota never refused: {refused:?}")
        };
        assert!(
            e.contains("\"greedy\"") && e.contains("quota is 10000 bytes"),
            "{e}"
        );
        assert!(j.usage("greedy").0 <= 10_000);
        // Another plugin still writes and reserves.
        j.set(&scoped(0, "other"), "k", "v", 65_536).unwrap();
        assert!(matches!(
            j.reserve(&scoped(0, "other"), "hbar", 1, 10, 60, 1_000_000)
                .unwrap(),
            Reserved::Granted { .. }
        ));
    }
    let j = JournalBackend::open_with(&dir, quota).unwrap();
    assert!(matches!(
        j.set(&scoped(99, "greedy"), "k", "v", 65_536),
        Err(StateError::Full(_))
    ));
    drop(j);
    let _ = std::fs::remove_dir_all(&dir);
}

fn granted(answer: Reserved) -> ReservationId {
    match answer {
        Reserved::Granted { id, .. } => id,
        other => panic!("not granted: {other:?}"),
    }
}

#[test]
fn reservations_a_stopped_process_left_are_orphans_with_their_binding_until_settled() {
    let dir = fresh("orphans");
    let p = pad("p");
    let now = 1_000_000_000;
    let bound = Binding::Transaction {
        id: "0.0.2-1700000000-000000001".into(),
        until_ms: 1_700_000_120_000,
    };
    {
        let j = JournalBackend::open(&dir).unwrap();
        let mut ids = Vec::new();
        for amount in [1, 2, 4, 8, 16] {
            ids.push(granted(j.reserve(&p, "k", amount, 100, 3600, now).unwrap()));
        }
        j.settle(&ids[0..1], true).unwrap();
        j.settle(&ids[1..2], false).unwrap();
        j.bind(&ids[3..4], &bound).unwrap();
        j.bind(&ids[4..5], &Binding::Opaque).unwrap();
        // A reservation that no longer holds cannot cover a transaction.
        assert!(j.bind(&ids[1..2], &Binding::Opaque).is_err());
        assert_eq!(
            j.orphans().unwrap(),
            vec![],
            "a live process's calls are not orphans"
        );
    } // dropped with three unsettled: the process stopped mid-call
    for reopening in 0..2 {
        // The second time from the snapshot the first one wrote.
        let j = JournalBackend::open(&dir).unwrap();
        let found: Vec<(u64, Binding)> = j
            .orphans()
            .unwrap()
            .into_iter()
            .map(|o| (o.amount, o.binding))
            .collect();
        assert_eq!(
            found,
            vec![
                (4, Binding::Unbound),
                (8, bound.clone()),
                (16, Binding::Opaque)
            ],
            "reopening {reopening}"
        );
        assert_eq!(j.spent(&p, "k", 3600, now).unwrap(), 1 + 4 + 8 + 16);
    }
    {
        let j = JournalBackend::open(&dir).unwrap();
        let orphans: Vec<ReservationId> = j.orphans().unwrap().into_iter().map(|o| o.id).collect();
        j.settle(&orphans[0..1], false).unwrap();
        j.settle(&orphans[1..], true).unwrap();
    }
    let j = JournalBackend::open(&dir).unwrap();
    assert_eq!(j.orphans().unwrap(), vec![]);
    assert_eq!(j.spent(&p, "k", 3600, now).unwrap(), 1 + 8 + 16);
    drop(j);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_earlier_haks_reservations_count_as_committed_not_as_orphans() {
    let dir = fresh("legacy-res");
    std::fs::create_dir_all(&dir).unwrap();
    let now = 1_000_000_000u64;
    std::fs::write(
        journal_path(&dir, 1),
        format!(
            "{{\"t\":\"res\",\"id\":7,\"s\":\"s\",\"p\":\"p\",\"k\":\"k\",\"w\":3600,\"b\":{},\"a\":5}}\n",
            bucket(now, 3600)
        ),
    )
    .unwrap();
    let j = JournalBackend::open(&dir).unwrap();
    assert_eq!(j.orphans().unwrap(), vec![]);
    assert_eq!(j.spent(&pad("p"), "k", 3600, now).unwrap(), 5);
    drop(j);
    let _ = std::fs::remove_dir_all(&dir);
}
