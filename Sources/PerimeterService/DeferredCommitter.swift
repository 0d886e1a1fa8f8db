/// Who commits the changes that a call of ``GeofencingService/process(_:committer:whenStored:)`` waits
/// for before its completion runs.
public enum DeferredCommitter: Sendable {
    /// The service's committer thread, started when a completion waits and ended after a second
    /// without work: the caller does nothing more.
    case serviceThread
    /// The caller, by calling ``GeofencingService/commitWaiting()`` soon — an event loop at the end of
    /// each round of requests — which commits once for every completion waiting and runs them on its
    /// thread. Until then (or until another commit stores the changes) the completion waits.
    case caller
}
