/// @file
/// The Communicator: a group of ranks and the collectives they call together. Chapters 5–8 talk
/// through it (data parallel all-reduces gradients, ZeRO reduce-scatters and all-gathers shards,
/// tensor parallel all-reduces inside a split group, pipeline parallel sends to neighbours,
/// expert parallel calls all_to_all).
///
/// The collectives are written once, here and in solutions/, over three point-to-point calls
/// (send, recv, sendrecv); a backend only moves bytes (threads.h, mpi.h), or hands whole
/// collectives to its own library (`Algorithm::kNative`; the NCCL backend does only that).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "chapters/03_collectives/types.h"

namespace book {
class Trace;  // common/trace.h
}  // namespace book

namespace book::coll {

/// What one rank has sent and received through its communicator (and the groups split from it
/// count separately). Counted where bytes leave and arrive, so a test can pin the textbook volumes.
struct Counters {
  std::uint64_t bytes_sent = 0;         ///< Payload bytes this rank sent.
  std::uint64_t bytes_received = 0;     ///< Payload bytes this rank received.
  std::uint64_t messages_sent = 0;      ///< Messages this rank sent (a 0-byte message counts).
  std::uint64_t messages_received = 0;  ///< Messages this rank received.
};

/// Tags from kReservedTags up belong to the collectives; user send/recv should stay below it.
inline constexpr int kReservedTags = 1 << 30;

/// The tag each collective uses for its messages (every rank calls collectives in the same order,
/// and messages between two ranks with one tag arrive in order, so one tag per kind suffices).
enum CollectiveTag : int {
  kTagRingReduceScatter = kReservedTags + 1,  ///< ring_reduce_scatter's messages.
  kTagRingAllGather,                          ///< ring_all_gather's messages.
  kTagTree,                                   ///< tree all-reduce, reduce and broadcast.
  kTagNaive,                                  ///< the naive gather-to-root algorithms.
  kTagAllToAll,                               ///< all_to_all's messages.
  kTagBarrier,                                ///< barrier's empty messages.
  kTagSplit,                                  ///< split's exchange of (color, key).
  kTagFingerprint,                            ///< the fingerprint check's exchange.
};

/// Whether a new communicator checks collective fingerprints (see
/// Communicator::set_fingerprint_check): true when the environment variable BOOK_COLL_CHECK is
/// "1", as `bazel test` sets it for every test (.bazelrc), false otherwise.
bool fingerprint_check_from_environment();

/// A group of `size()` ranks; this object is rank `rank()`'s end of it. Every rank of the group
/// calls the same collectives in the same order with matching arguments. A call that waits longer
/// than timeout() for another rank throws book::Error naming the collective, the group and the
/// rank it waited for; it never hangs.
///
/// **One thread at a time.** A Communicator object is used by one thread at a time: its calls
/// keep per-call state (scratch buffers, counters, the running operation's name) and, above all,
/// two threads' collectives on one group would interleave their messages, which no backend can
/// tell apart. A thread that needs to communicate while another one does (a communication thread
/// overlapping gradients with backward, chapter 5) gets its own communicator from split(), made
/// by every rank together: its messages then never mix with the first one's. AsyncCommunicator
/// (async.h) does exactly that. The rule is enforced, cheaply: a thread that enters a call while
/// another thread is inside one on the same object gets a book::Error saying so, before anything
/// is touched (the first thread's call carries on). Calls nested in the same thread (a collective
/// calling send) are fine. The setters (set_timeout, set_trace, ...) and counters() are not calls:
/// use them only while no call is in progress.
class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;             ///< One object per rank and group.
  Communicator& operator=(const Communicator&) = delete;  ///< One object per rank and group.

  int rank() const { return rank_; }  ///< This rank, in [0, size()).
  int size() const { return size_; }  ///< Number of ranks in the group.
  /// The group's name, e.g. "world" or "world/tp(dp 0, pp 1)".
  const std::string& group() const { return group_; }
  /// Renames the group, for error messages and traces (the process grid names its groups
  /// after what their members share, "world/tp(dp 0, pp 1)"). Messages are routed by the group
  /// itself, never by its name.
  void set_group_name(std::string name) { group_ = std::move(name); }

  /// Sends `data` to rank `dst` with `tag` (≥ 0). May return before `dst` receives it.
  void send(ConstBuffer data, int dst, int tag);
  /// Receives exactly `data.count` elements from rank `src` sent with `tag`; a message of another
  /// size is an error (the ranks disagree about a count).
  void recv(Buffer data, int src, int tag);
  /// Sends `out` to `dst` and receives `in` from `src` at once, as each step of a ring does.
  /// Safe when every rank calls it together: nobody waits for a send before receiving.
  void sendrecv(ConstBuffer out, int dst, Buffer in, int src, int tag);
  /// Sends `out` to `dst` while receiving from `src` straight into a reduction:
  /// `inout[i] = op(inout[i], incoming[i])`, with no intermediate copy of the incoming chunk where
  /// the backend allows it (the threads backend reads the sender's buffer directly, as NCCL's
  /// kernels reduce data as it arrives). Counted like sendrecv; `op` must not be kAvg.
  void sendrecv_reduce(ConstBuffer out, int dst, Buffer inout, int src, int tag, ReduceOp op);
  /// dst[i] = op(dst[i], src[i]) where the backend keeps its buffers (reduce_into on the host;
  /// on the GPU on the NCCL backend), recorded in the trace as this rank's reduce step.
  void reduce_local(Buffer dst, ConstBuffer src, ReduceOp op);
  /// A buffer of `count` elements of `dtype` for an algorithm's incoming chunk, in the memory the
  /// backend's buffers live in (host memory; device memory on the NCCL backend), reused between
  /// calls (so the pages are touched once, not per call). Valid until the next temporary().
  Buffer temporary(std::size_t count, DType dtype);

  /// Every rank's `data` becomes the element-wise reduction over all ranks' `data`.
  virtual void all_reduce(Buffer data, ReduceOp op = ReduceOp::kSum,
                          Algorithm algorithm = Algorithm::kAutomatic);
  /// `input` (the same count on every rank) is reduced over ranks; this rank gets its shard
  /// shard_of(input.count, size(), rank()) in `output`, which must have exactly that count.
  virtual void reduce_scatter(ConstBuffer input, Buffer output, ReduceOp op = ReduceOp::kSum,
                              Algorithm algorithm = Algorithm::kAutomatic);
  /// The inverse: rank r contributes shard r of `output` (shard_of(output.count, size(), r)) as
  /// `input`, and every rank gets the whole of `output`.
  virtual void all_gather(ConstBuffer input, Buffer output,
                          Algorithm algorithm = Algorithm::kAutomatic);
  /// Rank `root`'s `data` is copied to every rank's `data` (binomial tree).
  virtual void broadcast(Buffer data, int root);
  /// The reduction over ranks of `input` lands in `output` on rank `root` only (binomial tree);
  /// other ranks pass an empty `output`.
  virtual void reduce(ConstBuffer input, Buffer output, int root, ReduceOp op = ReduceOp::kSum);
  /// Rank r sends the next `send_counts[j]` elements of `input` to rank j and receives
  /// `recv_counts[j]` elements from rank j into `output`, in rank order (MPI_Alltoallv with
  /// packed displacements). Uneven splits are allowed; the counts must match pairwise.
  virtual void all_to_all(ConstBuffer input, std::span<const std::size_t> send_counts,
                          Buffer output, std::span<const std::size_t> recv_counts);
  /// Returns once every rank of the group has called barrier (dissemination, ⌈log2 N⌉ rounds).
  virtual void barrier();
  /// Splits the group: the ranks that pass the same `color` (≥ 0) form a new group, ordered by
  /// `key` then by rank; a negative color joins no group and gets nullptr. Every rank calls it.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;

  /// Bytes and messages this rank has sent and received since creation or reset_counters().
  const Counters& counters() const { return counters_; }
  /// Sets all counters to zero.
  void reset_counters() { counters_ = {}; }
  /// How long a call waits for another rank before it throws (default 30 s).
  std::chrono::milliseconds timeout() const { return timeout_; }
  /// Changes the timeout (must be positive).
  void set_timeout(std::chrono::milliseconds timeout);
  /// Below this many bytes, Algorithm::kAutomatic runs the tree all-reduce, from it the ring.
  std::size_t tree_threshold_bytes() const { return tree_threshold_bytes_; }
  /// Changes the tree/ring crossover used by Algorithm::kAutomatic.
  void set_tree_threshold_bytes(std::size_t bytes) { tree_threshold_bytes_ = bytes; }
  /// Records every send, receive, reduce and collective into `trace` (nullptr stops; not owned)
  /// as boxes on lane `lane` of process track `track` (−1: rank()). Communicators split from this
  /// one inherit the trace, lane and track, so one Trace shows each rank's groups on its own row.
  void set_trace(Trace* trace, std::string lane = "main", int track = -1);
  /// The trace, or nullptr.
  Trace* trace() const { return trace_; }
  /// The lane this communicator's boxes go to ("main" unless set_trace said otherwise).
  const std::string& trace_lane() const { return trace_lane_; }
  /// The process track this communicator's boxes go to.
  int trace_track() const { return trace_track_ >= 0 ? trace_track_ : rank_; }
  /// The collective this rank is in ("all_reduce(ring)", …), or "send"/"recv"; for messages.
  const std::string& operation() const { return operation_; }

  /// Turns the fingerprint check on or off (communicators split from this one inherit it). When
  /// on, every collective first exchanges a 16-byte fingerprint (the collective, its element type,
  /// its count, its reduce operation, its root) among the group's ranks, like PyTorch's
  /// TORCH_DISTRIBUTED_DEBUG=DETAIL, and throws book::Error on every rank, naming the ranks that
  /// disagree and what each called, before any data moves. Without it, ranks that pass 32 bf16
  /// on one rank and 16 f32 on another (the same bytes), or different reduce operations, get
  /// garbage with no error. all_to_all compares only its element type (its counts differ by
  /// design, and are checked pairwise as the messages arrive). The cost: ⌈log2 N⌉ exchanges of at
  /// most 16·N bytes per collective, which the counters leave out (they count the collective's own
  /// traffic). Off by default outside tests: fingerprint_check_from_environment(). Every backend
  /// checks, NCCL's through one ncclAllGather of the fingerprints in device memory.
  void set_fingerprint_check(bool on) { fingerprint_check_ = on; }
  /// Whether the fingerprint check is on.
  bool fingerprint_check() const { return fingerprint_check_; }

  /// Throws book::Error (starting with `who`) if this backend cannot have another communicator
  /// of this process in use on another thread while this one is: MPI below MPI_THREAD_MULTIPLE.
  /// AsyncCommunicator calls it before it starts its thread. Threads and NCCL: always fine.
  virtual void require_concurrent_use(std::string_view who) const { (void)who; }

 protected:
  /// A backend's end of a group.
  Communicator(int rank, int size, std::string group);

  /// Moves `bytes` bytes to `dst`; the base class has checked the arguments and counts them.
  virtual void transport_send(const void* data, std::size_t bytes, int dst, int tag) = 0;
  /// Receives exactly `bytes` bytes from `src`, or throws if the message has another size.
  virtual void transport_recv(void* data, std::size_t bytes, int src, int tag) = 0;
  /// Both at once; must not deadlock when every rank calls it.
  virtual void transport_sendrecv(const void* out, std::size_t out_bytes, int dst, void* in,
                                  std::size_t in_bytes, int src, int tag) = 0;
  /// sendrecv_reduce's transport. The default receives into a host buffer and reduces from it
  /// on the host; a backend that can read the incoming bytes in place, or whose buffers are not
  /// host memory, overrides it.
  virtual void transport_sendrecv_reduce(const void* out, std::size_t out_bytes, int dst,
                                         Buffer inout, int src, int tag, ReduceOp op);
  /// reduce_local's work: reduce_into() on the host; a backend whose buffers live elsewhere
  /// overrides it.
  virtual void local_reduce(Buffer dst, ConstBuffer src, ReduceOp op);
  /// temporary()'s memory: at least `bytes` bytes of host memory, reused between calls; a
  /// backend whose buffers live elsewhere overrides it.
  virtual void* temporary_memory(std::size_t bytes);
  /// all_to_all's argument checks, shared by every backend: one count per rank on each side,
  /// counts that add up to the buffers, one element type, and as many elements to this rank as
  /// from it. Throws book::Error naming the first that fails.
  void check_all_to_all(ConstBuffer input, std::span<const std::size_t> send_counts, Buffer output,
                        std::span<const std::size_t> recv_counts) const;
  /// Called when this rank enters a collective; the threads backend records it to name the
  /// ranks that never arrived.
  virtual void on_enter_collective() {}

  /// The collectives a fingerprint names.
  enum class Collective : std::uint8_t {
    kAllReduce,      ///< all_reduce
    kReduceScatter,  ///< reduce_scatter
    kAllGather,      ///< all_gather
    kBroadcast,      ///< broadcast
    kReduce,         ///< reduce
    kAllToAll,       ///< all_to_all
    kBarrier,        ///< barrier
  };
  /// When fingerprint_check() is on and the group has more than one rank: exchanges this call's
  /// fingerprint with every rank and throws book::Error if any rank's differs. `count` is the
  /// count every rank must agree on (0 where none), `op` the reduce operation (or none), `root`
  /// the root (−1 where none). Call it inside the collective's Scope, before any data moves.
  void check_fingerprint(Collective collective, std::size_t count, DType dtype,
                         std::optional<ReduceOp> op = std::nullopt, int root = -1);
  /// The fingerprint check's exchange: every rank passes its `bytes` bytes (`mine`, host memory)
  /// and gets every rank's in `all` (host memory, size() × `bytes`), rank r's at all + r·bytes.
  /// This one is Bruck's all-gather over the transport, ⌈log2 N⌉ rounds; the NCCL backend, whose
  /// transport needs device memory, overrides it with one ncclAllGather. Bypasses the counters.
  virtual void exchange_fingerprints(const void* mine, std::size_t bytes, void* all);

  /// Claims the communicator for the calling thread for one public call (see "One thread at a
  /// time" above). The outermost guard of a call claims it with one compare-and-swap and releases
  /// it at the end; guards nested in the same thread pass; another thread's guard throws
  /// book::Error naming the call it tried (`call`), the rank and the group.
  class CallGuard {
   public:
    /// Claims `comm` for this thread, or throws if another thread holds it.
    CallGuard(Communicator& comm, std::string_view call);
    ~CallGuard();
    CallGuard(const CallGuard&) = delete;             ///< Not copyable.
    CallGuard& operator=(const CallGuard&) = delete;  ///< Not copyable.

   private:
    Communicator& comm_;
    bool outermost_ = false;
  };

  /// Names the running operation for error messages and the trace, and restores it after. It
  /// holds a CallGuard, so every collective that opens a Scope is a guarded call.
  class Scope {
   public:
    /// Enters `name` on `comm`.
    Scope(Communicator& comm, std::string name);
    ~Scope();
    Scope(const Scope&) = delete;             ///< Not copyable.
    Scope& operator=(const Scope&) = delete;  ///< Not copyable.

   private:
    CallGuard guard_;  // first: claimed before anything else is touched
    Communicator& comm_;
    std::string previous_;
    double start_us_;
  };

  /// The standard words that start an error about this rank's current call.
  std::string where() const;
  /// Scratch memory of at least `bytes` bytes, reused between calls.
  void* scratch(std::size_t bytes);
  /// Gives a communicator this one split off the settings it inherits: the timeout, the tree
  /// threshold, and the trace with its lane and track. Backends call it in split().
  void pass_settings_to(Communicator& child) const;

 private:
  void check_peer(int peer, const char* what) const;
  // Adds one box to the trace (when there is one), ending now, on this communicator's lane/track.
  void record(std::string name, const char* category, double start_us, double bytes) const;
  int rank_;
  int size_;
  std::string group_;
  Counters counters_;
  std::chrono::milliseconds timeout_{30000};
  std::size_t tree_threshold_bytes_ = 64 * 1024;
  Trace* trace_ = nullptr;
  std::string trace_lane_ = "main";
  int trace_track_ = -1;
  bool fingerprint_check_ = fingerprint_check_from_environment();
  std::string operation_;
  std::vector<std::byte> scratch_;
  std::vector<std::byte> temporary_;
  std::vector<std::byte> incoming_;       // the default transport_sendrecv_reduce's landing buffer
  std::atomic<std::thread::id> owner_{};  // the thread inside a call, or none (CallGuard)
};

}  // namespace book::coll
