//! What a running action sets for itself and the actions it runs (its
//! scope, its token's limits): a thread-local value the nested actions
//! read, which goes back to the previous one when the action ends, also
//! when it fails.

use std::cell::RefCell;
use std::rc::Rc;
use std::thread::LocalKey;

/// Where an action's value is kept (`thread_local!`, starting empty).
pub type Slot<T> = RefCell<Option<Rc<T>>>;

/// The value in `slot`, if a running action set one.
pub fn get<T>(slot: &'static LocalKey<Slot<T>>) -> Option<Rc<T>> {
    slot.with(|c| c.borrow().clone())
}

/// Runs `f` with `value` in `slot` (None: what is there stays); the
/// previous value comes back afterwards, also when `f` fails.
pub fn with<T: 'static, R>(
    slot: &'static LocalKey<Slot<T>>,
    value: Option<T>,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore<T: 'static> {
        slot: &'static LocalKey<Slot<T>>,
        previous: Option<Rc<T>>,
    }
    impl<T: 'static> Drop for Restore<T> {
        fn drop(&mut self) {
            let previous = self.previous.take();
            self.slot.with(|c| *c.borrow_mut() = previous);
        }
    }
    let Some(value) = value else { return f() };
    let previous = slot.with(|c| c.borrow_mut().replace(Rc::new(value)));
    let _restore = Restore { slot, previous };
    f()
}
