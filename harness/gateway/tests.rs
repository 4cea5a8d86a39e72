use super::body::Reserved;
use super::*;

/// Bodies in flight are bounded together; one body alone may pass the bound.
#[test]
fn bodies_in_flight_are_bounded_together() {
    let count = std::sync::atomic::AtomicUsize::new(0);
    let big = Reserved::take(&count, MAX_INFLIGHT_BYTES + 10).expect("alone it passes");
    assert!(Reserved::take(&count, 1).is_none());
    drop(big);
    let a = Reserved::take(&count, MAX_INFLIGHT_BYTES / 2).unwrap();
    let b = Reserved::take(&count, MAX_INFLIGHT_BYTES / 2).unwrap();
    assert!(Reserved::take(&count, 1).is_none());
    drop((a, b));
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// What a body only announces holds nothing: a body that announces 64 MB and never sends
/// them takes none of the bound and is refused once it stalls; one that grows past the
/// bound as it arrives is refused at the part that passes it; one announced past
/// `--max-body` is refused unread; a body alone grows as far as `--max-body`.
#[tokio::test]
async fn a_body_holds_the_bound_by_what_arrived() {
    use futures_util::StreamExt;
    let idle = Duration::from_millis(100);
    let count = std::sync::atomic::AtomicUsize::new(0);
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_LENGTH,
        (64usize << 20).to_string().parse().unwrap(),
    );
    let stalled = Body::from_stream(
        futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from(vec![b'{'; 1024]))])
            .chain(futures_util::stream::pending()),
    );
    let reading = read_body(&count, &h, stalled, 1 << 30, idle);
    tokio::pin!(reading);
    // While it waits, the stalled body holds the 1 KB it sent, not the 64 MB it announced:
    // another request's body fits beside it.
    assert!(
        tokio::time::timeout(Duration::from_millis(30), &mut reading)
            .await
            .is_err()
    );
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1024);
    assert!(Reserved::take(&count, MAX_INFLIGHT_BYTES - 2048).is_some());
    assert!(matches!(reading.await, Err(BodyRefusal::Stalled)));
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 0);
    // A drip: a byte every 20 ms is below the minimum rate once the grace has passed.
    let drip = Body::from_stream(futures_util::stream::unfold((), |_| async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Some((Ok::<_, std::io::Error>(Bytes::from_static(b" ")), ()))
    }));
    assert!(matches!(
        read_body(&count, &HeaderMap::new(), drip, 1 << 30, idle).await,
        Err(BodyRefusal::Stalled)
    ));
    let other = Reserved::take(&count, MAX_INFLIGHT_BYTES - 10).unwrap();
    let parts = futures_util::stream::iter(
        (0..8).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![b' '; 4]))),
    );
    let grown = read_body(
        &count,
        &HeaderMap::new(),
        Body::from_stream(parts),
        1 << 30,
        idle,
    )
    .await;
    assert!(matches!(grown, Err(BodyRefusal::Busy)));
    let mut h2 = HeaderMap::new();
    h2.insert(header::CONTENT_LENGTH, "2000".parse().unwrap());
    let big = Body::from(vec![b'x'; 2000]);
    assert!(matches!(
        read_body(&count, &h2, big, 1000, idle).await,
        Err(BodyRefusal::TooLarge)
    ));
    drop(other);
    let parts = futures_util::stream::iter(
        (0..8).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![b' '; 4]))),
    );
    let (bytes, held) = read_body(
        &count,
        &HeaderMap::new(),
        Body::from_stream(parts),
        1 << 30,
        idle,
    )
    .await
    .ok()
    .unwrap();
    assert_eq!((bytes.len(), held.bytes), (32, 32));
    drop(held);
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// A `log` table toolcost did not make is refused, and the file is left byte for byte.
#[test]
fn a_foreign_log_table_is_refused_unwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("theirs.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE log (id INTEGER PRIMARY KEY, line TEXT); INSERT INTO log (line) VALUES ('mine');")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let e = log::open(&path).unwrap_err().to_string();
    assert!(e.contains("not toolcost's"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}
