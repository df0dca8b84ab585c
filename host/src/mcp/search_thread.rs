//! The thread that runs the searches of a server, one after another, in arrival order.
//!
//! The engine answers one call at a time (one instance behind a lock), so searches run in
//! turn whatever thread they are on. Through tokio's blocking pool each one was handed to a
//! pool thread that then queued for the engine's lock: at 64 HTTP clients, 6 `futex` calls and
//! 3.5 context switches a search. Here one thread takes them from a queue and keeps running
//! while there is work, so a busy server hands a search over without waking a thread, and the
//! engine's lock is not contended by searches (docs/performance.md, "Search at scale").

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;

type Job = Box<dyn FnOnce() + Send>;

/// The queue of searches and the thread that drains it (it ends with the last sender).
pub(crate) struct SearchThread {
    jobs: mpsc::Sender<Job>,
}

impl SearchThread {
    pub(crate) fn start() -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("skills-search".into())
            .spawn(move || {
                for job in queue {
                    // A search that panicked drops its answer's sender: its caller sees
                    // the panic, the thread goes on with the next one.
                    let _ = catch_unwind(AssertUnwindSafe(job));
                }
            })?;
        Ok(Self { jobs })
    }

    /// Run `f` on the search thread after the searches queued before it; its result.
    ///
    /// # Panics
    /// When `f` panicked (as a panic in `spawn_blocking` does when its handle is awaited).
    pub(crate) async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (done, answer) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            // (the caller may have gone: the answer is then dropped)
            let _ = done.send(f());
        });
        // (the thread drains the queue until `self`, the only sender, is dropped; a panic in a
        // search is caught there)
        self.jobs
            .send(job)
            .expect("the search thread serves while the server lives");
        answer.await.expect("a search panicked")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn searches_run_in_order_and_a_panic_leaves_the_thread_serving() {
        let t = SearchThread::start().expect("thread");
        let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let runs: Vec<_> = (0..20)
            .map(|i| {
                let order = order.clone();
                t.run(move || {
                    order.lock().unwrap().push(i);
                    (i, std::thread::current().name().map(str::to_owned))
                })
            })
            .collect();
        let mut answers = Vec::new();
        for r in runs {
            answers.push(r.await);
        }
        assert_eq!(answers.len(), 20);
        for (i, (got, thread)) in answers.into_iter().enumerate() {
            assert_eq!(got, i);
            assert_eq!(thread.as_deref(), Some("skills-search"));
        }
        assert_eq!(*order.lock().unwrap(), (0..20).collect::<Vec<_>>());

        let t = std::sync::Arc::new(t);
        let t2 = t.clone();
        let panicked = tokio::spawn(async move { t2.run(|| panic!("boom")).await }).await;
        assert!(panicked.is_err(), "the caller sees the search's panic");
        assert_eq!(t.run(|| 7).await, 7, "the thread serves the next search");
    }
}
