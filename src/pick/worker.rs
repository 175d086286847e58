//! Index work off the input path: a thread that runs one job at a time,
//! the newest one.
//!
//! Typing never waits for a search. Each keystroke hands the worker a
//! job that replaces any job it has not started yet (jobs are numbered by
//! the app, newer ones higher), so a burst of keys costs the search in
//! progress plus the last one, and the frame is drawn at once with the
//! results the app already has. The worker reports each result through
//! the callback it was given (the event loop's channel).

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

struct Slot<J> {
    job: Option<J>,
    closed: bool,
}

/// A thread running the newest job it was given.
pub struct Worker<J: Send + 'static> {
    shared: Arc<(Mutex<Slot<J>>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl<J: Send + 'static> Worker<J> {
    /// A worker thread named `name` that runs each job through `run`.
    pub fn spawn(name: &str, mut run: impl FnMut(J) + Send + 'static) -> Worker<J> {
        let shared = Arc::new((
            Mutex::new(Slot {
                job: None,
                closed: false,
            }),
            Condvar::new(),
        ));
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let (lock, ready) = &*theirs;
                loop {
                    let job = {
                        let mut slot = lock.lock().unwrap_or_else(PoisonError::into_inner);
                        loop {
                            if slot.closed {
                                return;
                            }
                            if let Some(job) = slot.job.take() {
                                break job;
                            }
                            slot = ready.wait(slot).unwrap_or_else(PoisonError::into_inner);
                        }
                    };
                    run(job);
                }
            })
            .expect("spawn a picker worker thread");
        Worker {
            shared,
            thread: Some(thread),
        }
    }

    /// Run `job` next, instead of any job not started yet.
    pub fn submit(&self, job: J) {
        let (lock, ready) = &*self.shared;
        lock.lock().unwrap_or_else(PoisonError::into_inner).job = Some(job);
        ready.notify_one();
    }
}

impl<J: Send + 'static> Drop for Worker<J> {
    fn drop(&mut self) {
        let (lock, ready) = &*self.shared;
        lock.lock().unwrap_or_else(PoisonError::into_inner).closed = true;
        ready.notify_one();
        // A job in progress is not waited for: the process may be about
        // to exit, or to become Pi.
        drop(self.thread.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_job_not_started_is_replaced_by_the_next() {
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel();
        let worker = Worker::spawn("test-worker", move |n: u32| {
            if n == 0 {
                // Hold the worker busy until the test has queued more.
                gate_rx.recv().unwrap();
            }
            done_tx.send(n).unwrap();
        });
        worker.submit(0);
        // Wait until job 0 has started (the slot is empty again).
        while worker.shared.0.lock().unwrap().job.is_some() {
            std::thread::yield_now();
        }
        for n in 1..=5 {
            worker.submit(n);
        }
        gate_tx.send(()).unwrap();
        assert_eq!(done_rx.recv().unwrap(), 0);
        assert_eq!(done_rx.recv().unwrap(), 5);
        drop(worker);
        assert!(done_rx.recv().is_err(), "no job after 5 ran");
    }
}
