//! The receiving half of a node: one stream of events for all its inputs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, NullArray};
use nerve_message::channel_table::InputChannel;
use nerve_shm::channel::{Held, Input, Taken};
use nerve_shm::clock::monotonic_ns;
use nerve_shm::codec::Decoder;
use nerve_shm::doorbell::Spin;
use nerve_shm::inbox::Inbox;
use nerve_shm::names::RunNames;
use nerve_shm::pool::{BlockCache, BlockRef};
use nerve_topic::{Message, Scope, Subscriber, SubscriberOptions};

use crate::clock::{Clock, TimerWatch};
use crate::error::NodeError;
use crate::event::{Event, InputId, Metadata, Next};
use crate::shared::{Control, Link, Shared};

enum Source {
    Shm {
        input: Input,
        decoder: Decoder,
    },
    /// Deadlines on [`Clock::timer_ns`].
    Timer {
        period_ns: u64,
        next_ns: u64,
    },
    /// A topic subscriber whose queues are in the node's inbox: its messages ring the node's
    /// doorbell, as an edge's do.
    Topic(Subscriber),
}

/// An input's `input_timeout`: it trips once the input has been silent `timeout` since its
/// last message, and resets at the next message.
struct Watchdog {
    timeout: Duration,
    /// When it trips; armed by the first message.
    due: Option<Instant>,
    /// [`Event::InputClosed`] was delivered for the silence.
    tripped: bool,
}

impl Watchdog {
    fn is_due(&self, now: Instant) -> bool {
        !self.tripped && self.due.is_some_and(|due| now >= due)
    }
}

struct Slot {
    id: InputId,
    source: Source,
    watchdog: Option<Watchdog>,
    /// The runtime said the input is closed: its producer ended or, for a timer, what drives
    /// the run did (a replay). What is queued is still delivered first.
    closing: bool,
    /// [`Event::InputClosed`] was delivered.
    closed: bool,
}

/// What a poll of the inputs found: an event, or a message of slot `slot` not yet decoded
/// (still at the head of its queue, when `held`).
enum Polled {
    Event(Event),
    Message { slot: usize, block: BlockRef, len: usize, held: Option<Held> },
}

/// How a poll takes messages from back-pressured queues.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Take {
    /// Out of the queue.
    Pop,
    /// Left at its head until used ([`Held`]).
    Hold,
}

/// One message of a shared-memory input as its producer encoded it (nerve's message format:
/// header, Arrow type, layout, metadata, buffers), read in place; the block stays held until
/// this is dropped, and a back-pressured input's queue keeps counting it until then, so its
/// producer gets no further ahead than what was forwarded. See [`EventStream::next_encoded`].
pub struct Encoded {
    // Dropped first: the queue entry goes before the block is released.
    _held: Option<Held>,
    block: BlockRef,
    len: usize,
}

impl AsRef<[u8]> for Encoded {
    fn as_ref(&self) -> &[u8] {
        &self.block.bytes()[..self.len]
    }
}

impl std::fmt::Debug for Encoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoded").field("len", &self.len).finish_non_exhaustive()
    }
}

/// Outcome of waiting for the next event with [`EventStream::next_encoded`].
#[derive(Debug)]
pub enum EncodedNext {
    /// A message of a shared-memory input, not decoded.
    Message {
        /// Input id.
        id: InputId,
        /// The message as its producer wrote it.
        message: Encoded,
    },
    /// Any other event (timers, topic inputs, closed inputs, stop, errors).
    Event(Event),
    /// The timeout passed first.
    Timeout,
    /// The stream has ended.
    End,
}

/// The events of a node, in arrival order across inputs.
///
/// Waiting sleeps on the node's doorbell, so it costs no CPU, and is cut short by a stop.
pub struct EventStream {
    shared: Arc<Shared>,
    _link: Arc<Link>,
    slots: Vec<Slot>,
    has_timers: bool,
    /// [`ChannelTable::exit_when_nodes_finish`](nerve_message::channel_table::ChannelTable):
    /// set until the inputs fed by nodes have all closed, and the others were closed after them.
    ends_with_node_inputs: bool,
    ended: bool,
    spin: Spin,
    clock: Clock,
    /// Rings the node at its timers' deadlines in simulated time.
    timer_watch: Option<TimerWatch>,
}

impl EventStream {
    pub(crate) fn new(
        shared: Arc<Shared>,
        link: Arc<Link>,
        names: &RunNames,
        inbox_of: &dyn Fn(usize) -> Result<Arc<Inbox>, NodeError>,
    ) -> Result<Self, NodeError> {
        let clock = shared.clock.clone();
        let now = clock.timer_ns();
        let mut slots = Vec::new();
        for input in &shared.table.inputs {
            let (id, source) = match input {
                InputChannel::Shm { id, queue, producer, output, edge } => {
                    let cache = BlockCache::open(names, *producer, *output, *edge)?;
                    let input = Input::new(shared.inbox.clone(), *queue, cache, Some(inbox_of(*producer)?));
                    (id.clone(), Source::Shm { input, decoder: Decoder::default() })
                }
                InputChannel::Timer { id, period_ns } => {
                    let period_ns = (*period_ns).max(1);
                    (id.clone(), Source::Timer { period_ns, next_ns: now.saturating_add(period_ns) })
                }
                InputChannel::Topic { id, topic, queue_size, queue } => {
                    let options = SubscriberOptions {
                        queue_size: *queue_size,
                        run: shared.run_scope(topic),
                        ..Default::default()
                    };
                    (id.clone(), Source::Topic(Subscriber::in_inbox(topic, options, shared.inbox.clone(), *queue)?))
                }
            };
            let watchdog = shared.table.input_timeouts.get(id.as_str()).map(|&ns| Watchdog {
                timeout: Duration::from_nanos(ns),
                due: None,
                tripped: false,
            });
            slots.push(Slot { id: InputId::from(id), source, watchdog, closing: false, closed: false });
        }
        let has_timers = slots.iter().any(|s| matches!(s.source, Source::Timer { .. }));
        let timer_watch = if has_timers { TimerWatch::start(&clock, shared.inbox.clone())? } else { None };
        let stream =
            // A short poll before sleeping lets a busy stream be drained without a system call
            // per message (while the stream is busy: see `Spin`).
            Self {
                ends_with_node_inputs: shared.table.exit_when_nodes_finish
                    && slots.iter().any(|s| matches!(s.source, Source::Shm { .. })),
                shared,
                _link: link,
                slots,
                has_timers,
                ended: false,
                spin: Spin::from_env(),
                clock,
                timer_watch,
            };
        stream.publish_next_timer();
        Ok(stream)
    }

    /// Adds a timer to the node's events: every `period` on the node's clock (the run's
    /// simulated time under `nerve run --sim-time`), an [`Event::Input`] with id `id` and an
    /// empty value, as a `timer/...` input of the dataflow gives. A tick missed while the node
    /// was busy is skipped rather than made up. The timer lasts as long as the stream.
    ///
    /// # Errors
    /// [`NodeError::TimerId`] when an input or timer of the node already has the id; a failure
    /// to follow the simulated time.
    pub fn add_timer(&mut self, id: &str, period: Duration) -> Result<InputId, NodeError> {
        if self.slots.iter().any(|s| s.id == id) {
            return Err(NodeError::TimerId { id: id.to_owned() });
        }
        let period_ns = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX).max(1);
        let next_ns = self.clock.timer_ns().saturating_add(period_ns);
        let id = InputId::from(id);
        self.slots.push(Slot {
            id: id.clone(),
            source: Source::Timer { period_ns, next_ns },
            watchdog: None,
            closing: false,
            closed: false,
        });
        if !self.has_timers {
            self.has_timers = true;
            self.timer_watch = TimerWatch::start(&self.clock, self.shared.inbox.clone())?;
        }
        self.publish_next_timer();
        Ok(id)
    }

    /// The node's clock (the same as [`crate::Node::clock`]).
    #[must_use]
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Whether the event last returned came after a sleep (rather than being there at once,
    /// coming within the poll, or after a timeout); asked once per event: the node may be one of
    /// several readers that event's message woke together.
    #[must_use]
    pub fn take_slept(&self) -> bool {
        self.spin.take_slept()
    }

    /// Busy-polls this long before sleeping: lower wake-up latency for a core's worth of CPU.
    pub fn set_spin(&mut self, spin: Duration) {
        self.spin = Spin::fixed(spin);
    }

    /// Messages each input lost so far because its queue was full (`drop_oldest` inputs and
    /// topic inputs drop their oldest), as (input id, count), in declaration order; inputs that
    /// cannot drop (timers, back-pressured edges) count 0.
    #[must_use]
    pub fn dropped(&self) -> Vec<(String, u64)> {
        self.slots
            .iter()
            .map(|s| {
                let n = match &s.source {
                    Source::Shm { input, .. } => input.dropped(),
                    Source::Topic(sub) => sub.dropped(),
                    Source::Timer { .. } => 0,
                };
                (s.id.to_string(), n)
            })
            .collect()
    }

    /// Waits for the next event; `None` once the stream has ended.
    pub fn recv(&mut self) -> Option<Event> {
        match self.next_event(None) {
            Next::Event(e) => Some(e),
            Next::Timeout | Next::End => None,
        }
    }

    /// Whether nothing waits to be handled: no message queued on any input, no timer due, no
    /// word from the runtime (which may or may not make an event: a stop does, a parameter
    /// request does not). Once false, [`EventStream::try_recv`] has something to look at.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ended || !has_work(&self.shared, &self.slots, &self.clock)
    }

    /// Returns the next event without waiting.
    pub fn try_recv(&mut self) -> Next {
        self.next_event(Some(Duration::ZERO))
    }

    /// Waits at most `timeout` (forever with `None`) for the next event.
    pub fn next_event(&mut self, timeout: Option<Duration>) -> Next {
        match self.wait(timeout, Take::Pop) {
            Ok(polled) => Next::Event(self.decode(polled)),
            Err(next) => next,
        }
    }

    /// Like [`EventStream::next_event`], but messages of shared-memory inputs come as their
    /// producer encoded them, not decoded: for forwarding them as they are (to another host).
    /// A back-pressured input gives its next message only once the previous [`Encoded`] of it
    /// was dropped.
    pub fn next_encoded(&mut self, timeout: Option<Duration>) -> EncodedNext {
        match self.wait(timeout, Take::Hold) {
            Ok(polled) => self.encoded(polled),
            Err(Next::Timeout) => EncodedNext::Timeout,
            Err(_) => EncodedNext::End,
        }
    }

    /// Like [`EventStream::next_queued`], with messages as [`EventStream::next_encoded`] gives
    /// them.
    pub fn next_queued_encoded(&mut self) -> Option<EncodedNext> {
        self.poll_queued(Take::Hold).map(|polled| self.encoded(polled))
    }

    fn encoded(&self, polled: Polled) -> EncodedNext {
        match polled {
            Polled::Event(e) => EncodedNext::Event(e),
            Polled::Message { slot, block, len, held } => {
                EncodedNext::Message { id: self.slots[slot].id.clone(), message: Encoded { _held: held, block, len } }
            }
        }
    }

    fn decode(&mut self, polled: Polled) -> Event {
        let (slot, block, len) = match polled {
            Polled::Event(e) => return e,
            Polled::Message { slot, block, len, .. } => (slot, block, len),
        };
        let Slot { id, source, .. } = &mut self.slots[slot];
        let Source::Shm { decoder, .. } = source else {
            return Event::Error(format!("input `{id}`: a message from an input without shared memory"));
        };
        match decoder.decode(block, len) {
            Ok((metadata, data)) => {
                #[cfg(feature = "profile-stages")]
                let metadata = crate::profile::decoded(metadata);
                Event::Input(Message::new(id.clone(), metadata, data))
            }
            Err(e) => Event::Error(format!("input `{id}`: {e}")),
        }
    }

    /// Waits for what the next event is made of; `Err` with [`Next::Timeout`] or [`Next::End`].
    fn wait(&mut self, timeout: Option<Duration>, take: Take) -> Result<Polled, Next> {
        let deadline = timeout.map(|t| Instant::now() + t);
        self.shared.inbox.note_call();
        loop {
            if self.ended {
                return Err(Next::End);
            }
            if let Some(polled) = self.poll(take) {
                return Ok(polled);
            }
            if !self.slots.is_empty() && self.slots.iter().all(|s| s.closed) {
                self.ended = true;
                return Err(Next::End);
            }
            // Checked before waiting, so that a look without waiting (`try_recv`) neither polls
            // nor tells the adaptive poll that waits are long.
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(Next::Timeout);
            }
            let timer = self.next_timer().and_then(|due| self.clock.wake_at(due));
            let wake = [deadline, timer, self.next_watchdog()].into_iter().flatten().min();
            if self.slots.iter().any(|s| matches!(&s.source, Source::Topic(sub) if sub.handing_over())) {
                // The doorbell rang for that message already; its memory arrives in microseconds.
                std::thread::sleep(nerve_topic::HAND_OVER_PAUSE);
                continue;
            }
            let shared = self.shared.clone();
            let (slots, clock) = (&self.slots, &self.clock);
            // Whatever ended the wait, the next turn of the loop looks again.
            let spin = &mut self.spin;
            shared
                .inbox
                .waiting(|| spin.wait(shared.inbox.doorbell(), wake, || has_work(&shared, slots, clock).then_some(())));
            #[cfg(feature = "profile-stages")]
            crate::profile::woke();
        }
    }

    /// When the earliest `input_timeout` trips.
    fn next_watchdog(&self) -> Option<Instant> {
        self.slots.iter().filter(|s| !s.closing).filter_map(|s| s.watchdog.as_ref().filter(|w| !w.tripped)?.due).min()
    }

    /// [`Event::InputClosed`] for an input whose `input_timeout` ran out with nothing queued.
    fn poll_watchdogs(&mut self) -> Option<Polled> {
        let now = Instant::now();
        let slot = self
            .slots
            .iter_mut()
            .find(|s| !s.closing && s.watchdog.as_ref().is_some_and(|w| w.is_due(now)) && !has_message(&s.source))?;
        if let Some(w) = slot.watchdog.as_mut() {
            w.tripped = true;
            w.due = None;
        }
        Some(Polled::Event(Event::InputClosed { id: slot.id.clone() }))
    }

    /// The earliest timer deadline, on [`Clock::timer_ns`].
    fn next_timer(&self) -> Option<u64> {
        self.slots
            .iter()
            .filter(|s| !s.closing)
            .filter_map(|s| match s.source {
                Source::Timer { next_ns, .. } => Some(next_ns),
                Source::Shm { .. } | Source::Topic(_) => None,
            })
            .min()
    }

    fn poll(&mut self, take: Take) -> Option<Polled> {
        while let Some(c) = self.shared.pop_control() {
            match c {
                Control::Stop => {
                    self.ended = true;
                    return Some(Polled::Event(Event::Stop));
                }
                Control::Error(e) => return Some(Polled::Event(Event::Error(e))),
                Control::InputClosed(id) => {
                    if let Some(s) = self.slots.iter_mut().find(|s| s.id == id) {
                        s.closing = true;
                    }
                }
                Control::TimersClosed => {
                    for s in self.slots.iter_mut().filter(|s| matches!(s.source, Source::Timer { .. })) {
                        s.closing = true;
                    }
                }
                Control::InputReopened(id) => {
                    if let Some(s) = self.slots.iter_mut().find(|s| s.id == id) {
                        s.closing = false;
                        s.closed = false;
                    }
                }
                Control::Connect { input, topic, queue_size, queue } => {
                    if let Err(e) = self.connect(&input, &topic, queue_size, queue) {
                        return Some(Polled::Event(Event::Error(format!(
                            "input `{input}`: cannot subscribe to `{topic}`, which `nerve node connect` gave it: {e}"
                        ))));
                    }
                }
                Control::Disconnect(id) => {
                    if let Some(i) = self.slots.iter().position(|s| s.id == id && matches!(s.source, Source::Topic(_)))
                    {
                        // Unsubscribes: its publishers write to it no more.
                        let slot = self.slots.remove(i);
                        if !slot.closed {
                            return Some(Polled::Event(Event::InputClosed { id: slot.id }));
                        }
                    }
                }
            }
        }
        self.close_clocks_once_node_inputs_closed();
        if let Some(polled) = self.poll_timers() {
            return Some(polled);
        }
        if let Some(polled) = self.poll_queued(take) {
            return Some(polled);
        }
        if let Some(polled) = self.poll_watchdogs() {
            return Some(polled);
        }
        for s in &mut self.slots {
            if s.closing && !s.closed {
                s.closed = true;
                // Its silence was told already.
                if s.watchdog.as_ref().is_some_and(|w| w.tripped) {
                    continue;
                }
                return Some(Polled::Event(Event::InputClosed { id: s.id.clone() }));
            }
        }
        None
    }

    /// Feeds input `id` from `topic`, with its queues from `queue` on in the node's inbox: a
    /// new input, or one whose edge was cut (closed) and now reads another output.
    fn connect(&mut self, id: &str, topic: &str, queue_size: usize, queue: usize) -> Result<(), NodeError> {
        // The topic of an output of this host's part of the run: nothing to hear from the network.
        let options = SubscriberOptions {
            queue_size,
            scope: Scope::Host,
            run: self.shared.run_scope(topic),
            ..Default::default()
        };
        let source = Source::Topic(Subscriber::in_inbox(topic, options, self.shared.inbox.clone(), queue)?);
        match self.slots.iter_mut().find(|s| s.id == id) {
            Some(slot) if slot.closing || slot.closed => {
                if let Source::Shm { input, .. } = &mut slot.source {
                    // What the cut edge still queued goes, and with it the blocks it held.
                    while input.recv().is_some() {}
                }
                slot.source = source;
                slot.closing = false;
                slot.closed = false;
            }
            Some(_) => return Err(NodeError::Protocol(format!("input `{id}` is already fed"))),
            None => {
                self.slots.push(Slot { id: InputId::from(id), source, watchdog: None, closing: false, closed: false })
            }
        }
        Ok(())
    }

    /// Under `exit_when_nodes_finish`, closes the timers and topic inputs once every input a
    /// node feeds is closing: they are the node's clock, not its work.
    fn close_clocks_once_node_inputs_closed(&mut self) {
        let node_input = |s: &Slot| matches!(s.source, Source::Shm { .. });
        if !self.ends_with_node_inputs || !self.slots.iter().filter(|s| node_input(s)).all(|s| s.closing) {
            return;
        }
        self.ends_with_node_inputs = false;
        for s in self.slots.iter_mut().filter(|s| !node_input(s)) {
            s.closing = true;
        }
    }

    /// The tick of a timer that is due.
    fn poll_timers(&mut self) -> Option<Polled> {
        if !self.has_timers {
            // Spares a clock read per message to a node without timers.
            return None;
        }
        let now = self.clock.timer_ns();
        for i in 0..self.slots.len() {
            if self.slots[i].closing {
                // The runtime closed the timer: what drives the run has ended (a replay).
                continue;
            }
            let Source::Timer { period_ns, next_ns } = &mut self.slots[i].source else { continue };
            if *next_ns > now.saturating_add(*period_ns) {
                // Simulated time went back (a replay that loops): tick again from the new time.
                *next_ns = now.saturating_add(*period_ns);
            }
            if *next_ns <= now {
                *next_ns = next_ns.saturating_add(*period_ns);
                if *next_ns <= now {
                    // A slow node skips missed ticks rather than bursting through them.
                    *next_ns = now.saturating_add(*period_ns);
                }
                let id = self.slots[i].id.clone();
                self.publish_next_timer();
                let data: ArrayRef = Arc::new(NullArray::new(0));
                let metadata = Metadata { timestamp: monotonic_ns(), ..Metadata::default() };
                return Some(Polled::Event(Event::Input(Message::new(id, metadata, data))));
            }
        }
        None
    }

    /// The oldest message waiting in any input's queue, without waiting for one; it works after
    /// [`Event::Stop`] too, so a node that must keep everything that reached it (a recorder)
    /// can drain its queues before it exits.
    pub fn next_queued(&mut self) -> Option<Event> {
        self.poll_queued(Take::Pop).map(|polled| self.decode(polled))
    }

    fn poll_queued(&mut self, take: Take) -> Option<Polled> {
        let oldest = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match &s.source {
                Source::Shm { input, .. } => input.peek_stamp().map(|stamp| (i, stamp)),
                // A topic has no end: one closing (under `exit_when_nodes_finish`) is read no more.
                Source::Topic(_) if s.closing => None,
                Source::Topic(sub) => sub.peek_stamp().map(|stamp| (i, stamp)),
                Source::Timer { .. } => None,
            })
            .min_by_key(|&(_, stamp)| stamp);
        let (i, _) = oldest?;
        if let Some(w) = self.slots[i].watchdog.as_mut() {
            w.due = Some(Instant::now() + w.timeout);
            if std::mem::take(&mut w.tripped) {
                // The message stays queued: it comes right after.
                return Some(Polled::Event(Event::InputRecovered { id: self.slots[i].id.clone() }));
            }
        }
        self.take(i, take)
    }

    fn publish_next_timer(&self) {
        if let (Some(watch), Some(due)) = (&self.timer_watch, self.next_timer()) {
            watch.set_next(due);
        }
    }

    fn take(&mut self, i: usize, take: Take) -> Option<Polled> {
        let Slot { id, source, .. } = &mut self.slots[i];
        match source {
            Source::Shm { input, .. } => {
                let taken = match take {
                    Take::Pop => input.recv().map(|r| r.map(|(block, len)| Taken { block, len, held: None })),
                    Take::Hold => input.hold(),
                };
                Some(match taken? {
                    Ok(Taken { block, len, held }) => Polled::Message { slot: i, block, len, held },
                    Err(e) => Polled::Event(Event::Error(format!("input `{id}`: {e}"))),
                })
            }
            Source::Topic(sub) => Some(Polled::Event(match sub.try_recv().transpose()? {
                Ok(Message { metadata, data, object: None, .. }) => {
                    Event::Input(Message::new(id.clone(), metadata, data))
                }
                Ok(Message { id: topic, .. }) => Event::Error(format!(
                    "input `{id}`: a message of topic `{topic}` sent as an object within this process is not an Arrow array"
                )),
                Err(e) => Event::Error(format!("input `{id}`: {e}")),
            })),
            Source::Timer { .. } => None,
        }
    }
}

/// Whether a message waits in the queue of `source` (a timer has none).
fn has_message(source: &Source) -> bool {
    match source {
        Source::Shm { input, .. } => !input.is_empty(),
        Source::Topic(sub) => sub.has_pending(),
        Source::Timer { .. } => false,
    }
}

fn has_work(shared: &Shared, slots: &[Slot], clock: &Clock) -> bool {
    shared.has_control()
        || slots.iter().any(|s| {
            (s.closing && !s.closed)
                || match &s.source {
                    Source::Shm { .. } => has_message(&s.source),
                    Source::Timer { next_ns, .. } => !s.closing && *next_ns <= clock.timer_ns(),
                    Source::Topic(_) => !s.closing && has_message(&s.source),
                }
                || (!s.closing && s.watchdog.as_ref().is_some_and(|w| w.is_due(Instant::now())))
        })
}

impl Iterator for EventStream {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        self.recv()
    }
}
