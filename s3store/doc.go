// Package s3store keeps an mdmemory store in S3-compatible object storage:
// a [memory.Backend] on a bucket and a key prefix, for agents that run on
// several machines, or in containers with no disk that lasts.
//
// # Keys and paths
//
// One memory root is one key prefix in a bucket, typically one per user or
// per agent ("memory/alice/"). A file's key is the prefix followed by the
// same relative path it has on disk:
//
//	facts/user.md        →  memory/alice/facts/user.md
//	episodes/2026-11.md  →  memory/alice/episodes/2026-11.md
//
// so that a person can edit memory as a folder:
//
//	aws s3 sync s3://bucket/memory/alice/ alice/     # down
//	$EDITOR alice/facts/user.md
//	aws s3 cp alice/facts/user.md s3://bucket/memory/alice/facts/user.md    # the edited file only
//
// The next read and search of every Store on the prefix see the edit: a
// file's ETag changed, so its tag in [Backend.List] did. The only other
// keys the backend writes are the folder leases under ".lease/" (see
// [Backend.Lock]); `aws s3 sync` brings them down too, and they can be
// ignored or deleted (--exclude '.lease/*').
//
// # Guarantees
//
// What the local directory does with files, this backend does with
// conditional requests (S3 conditional writes, RFC 7232 If-Match and
// If-None-Match):
//
//   - A file's version is its ETag, exactly as the server returned it.
//     Where the directory compares a file's content under its lock, a
//     change here is a conditional PUT, which the server applies only if
//     the object is still at that ETag (If-Match), or still absent
//     (If-None-Match: *). Two writers racing on one file cannot both
//     succeed; the loser gets [memory.ErrChanged] and reads again.
//   - A PUT replaces an object whole: a reader sees the old content or the
//     new, never a mix, and a writer killed mid-upload leaves the old.
//   - Where the directory tags a file by size and modification time, and
//     must distrust a time within two seconds of a change, a listing here
//     tags it by its ETag, which changes with every content change: on a
//     server whose listings are strongly consistent (AWS S3, R2, versitygw,
//     MinIO), there is no window in which a change goes unseen.
//   - The lock of a folder ("facts/", "episodes/") is a lease object taken
//     with a create-only conditional PUT; it expires [LeaseTTL] after it
//     was taken. A holder that keeps it longer (a process paused or cut off
//     for that long) loses it, and another Store can then change the folder
//     while the first finishes its change: the facts budget can then be
//     exceeded by at most one fact change, the one the late holder writes,
//     since every write still compares versions. See [Backend.Lock].
//   - A write whose response is lost (a time-out, a dropped connection, a
//     5xx) is not retried blindly: the object is read again, and if it
//     holds exactly the bytes sent, the write counts as done.
//
// Servers that compare If-Match only with the bare form of an ETag (Ceph
// RGW) are detected on the first refusal and sent the bare form from then
// on.
package s3store
