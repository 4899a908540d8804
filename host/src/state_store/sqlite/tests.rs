use super::*;

#[test]
fn an_earlier_haks_file_gets_owners_and_its_reservations_stay_counted() {
    let dir = std::env::temp_dir().join(format!("hak-sqlite-earlier-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let now = super::super::now_ms();
    {
        // The schema before owners, with one unsettled reservation.
        let conn = Connection::open(dir.join("state.sqlite3")).unwrap();
        conn.execute_batch(
            SCHEMA
                .split("CREATE TABLE IF NOT EXISTS owners")
                .next()
                .unwrap(),
        )
        .unwrap();
        conn.execute(
            "INSERT INTO reservations (scope, plugin, key, window, bucket, amount) VALUES ('s', 'p', 'k', 3600, ?1, 5)",
            params![bucket(now, 3600) as i64],
        )
        .unwrap();
        conn.execute_batch(
            "INSERT INTO budgets VALUES ('s', 'p', 'k', 3600);
             INSERT INTO pads VALUES ('s', 'p', 'note', 'hello', 73);",
        )
        .unwrap();
    }
    let pad = PadKey {
        scope: "s".into(),
        plugin: "p".into(),
    };
    let store = SqliteBackend::open_with(&dir, Quota::default(), Duration::from_secs(1)).unwrap();
    assert_eq!(store.spent(&pad, "k", 3600, now).unwrap(), 5);
    // What it held is counted against the quotas: the entry and the budget key "k".
    let held: i64 = store
        .local()
        .conn
        .query_row("SELECT bytes FROM usage WHERE plugin = 'p'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(held, 73 + 1 + 64);
    let Reserved::Granted { id, .. } = store.reserve(&pad, "k", 2, 100, 3600, now).unwrap() else {
        panic!("not granted")
    };
    store.bind(&[id], &Binding::Opaque).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    // The earlier row has no owner: never an orphan. This store's own are not either.
    assert_eq!(store.orphans().unwrap(), vec![]);
    // Opened again by a second store: the first one is alive (its heartbeat runs).
    let other = SqliteBackend::open_with(&dir, Quota::default(), Duration::from_secs(1)).unwrap();
    assert_eq!(other.orphans().unwrap(), vec![]);
    drop(store); // a clean stop: what it held is an orphan for the others at once
    let orphans = other.orphans().unwrap();
    assert_eq!(orphans.len(), 1, "{orphans:?}");
    assert_eq!(
        (orphans[0].amount, &orphans[0].binding),
        (2, &Binding::Opaque)
    );
    assert!(other.settle_orphan(&orphans[0], true).unwrap());
    assert!(
        !other.settle_orphan(&orphans[0], true).unwrap(),
        "settled once"
    );
    assert_eq!(other.spent(&pad, "k", 3600, now).unwrap(), 7);
    drop(other);
    let _ = std::fs::remove_dir_all(&dir);
}
