//! One rule for work many callers may ask for at once (an index rebuild, a git refresh): one run
//! at a time and at most one queued. A caller that arrives while a run is going joins the queued
//! run and gets its result: that run starts after the caller arrived, so it sees whatever the
//! caller changed before asking, and a storm of requests costs at most two runs.
//!
//! Nobody is turned away ("busy") and nobody waits on a thread: a caller gets a receiver (await
//! it, or `blocking_recv` off the async threads); the first caller of an idle flight also gets
//! the [`Flight`] and starts the worker that makes the runs (on a thread or task of its own, so a
//! caller that gives up never cuts a run in half). A worker that dies (a panic) drops the
//! senders: its callers see the receiver closed, and the next caller starts afresh.
//!
//! `A` is what a caller asks of a run; the callers of one run have their asks merged (the
//! largest wins: a forced git refresh outranks a periodic check).

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;

/// The one-running, one-queued rule (cheap to clone; the clones share the state).
pub struct SingleFlight<T, A = ()> {
    state: Arc<Mutex<State<T, A>>>,
}

impl<T, A> Clone for SingleFlight<T, A> {
    fn clone(&self) -> Self {
        Self {
            state: self.state.clone(),
        }
    }
}

impl<T, A> Default for SingleFlight<T, A> {
    fn default() -> Self {
        Self {
            state: Arc::new(Mutex::new(State {
                running: false,
                current: Vec::new(),
                queued: None,
                runs: 0,
            })),
        }
    }
}

struct State<T, A> {
    /// A worker is making runs.
    running: bool,
    /// The callers of the run being made.
    current: Vec<oneshot::Sender<T>>,
    /// The run to make next: what its callers asked (merged), and the callers.
    queued: Option<(A, Vec<oneshot::Sender<T>>)>,
    /// Runs started so far.
    runs: u64,
}

/// What a caller gets from [`SingleFlight::join`].
pub struct Joined<T, A> {
    /// The result of the run this caller shares (closed if its worker died).
    pub result: oneshot::Receiver<T>,
    /// `Some` for the caller that found the flight idle: it must start a worker that makes the
    /// runs ([`Flight::finish`] after each), beginning with one for this ask.
    pub start: Option<(Flight<T, A>, A)>,
}

/// The right (and the duty) to make the flight's runs; dropped without [`Flight::finish`]
/// returning `None`, the callers waiting on it see their receivers closed.
pub struct Flight<T, A> {
    flight: SingleFlight<T, A>,
    done: bool,
}

impl<T: Clone, A: Ord + Copy> SingleFlight<T, A> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Ask for a run: the one about to start if the flight is idle, else the queued one.
    pub fn join(&self, ask: A) -> Joined<T, A> {
        let (tx, result) = oneshot::channel();
        let mut state = self.lock();
        if !state.running {
            state.running = true;
            state.runs += 1;
            state.current.push(tx);
            let flight = Flight {
                flight: self.clone(),
                done: false,
            };
            return Joined {
                result,
                start: Some((flight, ask)),
            };
        }
        match &mut state.queued {
            Some((asked, callers)) => {
                *asked = (*asked).max(ask);
                callers.push(tx);
            }
            None => state.queued = Some((ask, vec![tx])),
        }
        Joined {
            result,
            start: None,
        }
    }

    /// Runs started so far (a rebuild counter).
    pub fn runs(&self) -> u64 {
        self.lock().runs
    }

    fn lock(&self) -> MutexGuard<'_, State<T, A>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: Clone, A: Ord + Copy> Flight<T, A> {
    /// Hand `result` to the callers of the run just made; returns the ask of the next run when
    /// one is queued (its callers become the current ones), `None` when the flight is idle again.
    pub fn finish(&mut self, result: T) -> Option<A> {
        let (callers, next) = {
            let mut state = self.flight.lock();
            let callers = std::mem::take(&mut state.current);
            let next = match state.queued.take() {
                Some((ask, queued)) => {
                    state.current = queued;
                    state.runs += 1;
                    Some(ask)
                }
                None => {
                    state.running = false;
                    self.done = true;
                    None
                }
            };
            (callers, next)
        };
        for caller in callers {
            // A caller that gave up has dropped its receiver: nothing to tell it.
            let _ = caller.send(result.clone());
        }
        next
    }

    /// The number of the run being made (1 for the flight's first).
    pub fn run_number(&self) -> u64 {
        self.flight.lock().runs
    }
}

impl<T, A> Drop for Flight<T, A> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // The worker died: its callers and the queued ones see their receivers closed.
        let mut state = self.flight.state.lock().unwrap_or_else(|e| e.into_inner());
        state.current.clear();
        state.queued = None;
        state.running = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_during_a_run_share_the_queued_one() {
        let flight = SingleFlight::<u64, bool>::new();
        let first = flight.join(false);
        let (mut worker, ask) = first.start.expect("idle: the first caller starts");
        assert!(!ask);
        let others: Vec<_> = (0..5).map(|i| flight.join(i == 3)).collect();
        assert!(others.iter().all(|j| j.start.is_none()));
        // The queued run asks what its strongest caller asked.
        assert_eq!(worker.finish(1), Some(true));
        assert_eq!(worker.run_number(), 2);
        // A caller arriving during the second run queues a third.
        let late = flight.join(false);
        assert_eq!(worker.finish(2), Some(false));
        assert_eq!(worker.finish(3), None);
        assert_eq!(first.result.blocking_recv().unwrap(), 1);
        for j in others {
            assert_eq!(j.result.blocking_recv().unwrap(), 2);
        }
        assert_eq!(late.result.blocking_recv().unwrap(), 3);
        assert_eq!(flight.runs(), 3);
        // Idle again: the next caller starts.
        assert!(flight.join(false).start.is_some());
    }

    #[test]
    fn a_dead_worker_closes_its_callers_and_the_flight_starts_again() {
        let flight = SingleFlight::<u64>::new();
        let first = flight.join(());
        let queued = flight.join(());
        drop(first.start);
        assert!(first.result.blocking_recv().is_err());
        assert!(queued.result.blocking_recv().is_err());
        let again = flight.join(());
        let (mut worker, ()) = again.start.expect("idle again");
        assert_eq!(worker.finish(7), None);
        assert_eq!(again.result.blocking_recv().unwrap(), 7);
    }
}
