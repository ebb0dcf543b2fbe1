//! The run core's arenas: nodes and scopes in vectors indexed by their own typed indices
//! (`arena[node]`, never `vec[node.0 as usize]`), growing by an eighth, with released slots
//! handed out again before the arena grows (`core/reclaim.rs` decides what is released).

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// An index into one kind of arena: a `u32` slot number.
pub(super) trait Slot: Copy {
    fn from_slot(slot: u32) -> Self;
    fn slot(self) -> usize;
}

/// Items of one kind by slot, with the released slots the next [`Arena::place`] fills.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Arena<I, T> {
    items: Vec<T>,
    free: Vec<I>,
    _index: PhantomData<I>,
}

impl<I: Slot, T> Default for Arena<I, T> {
    fn default() -> Self {
        Arena { items: Vec::new(), free: Vec::new(), _index: PhantomData }
    }
}

impl<I: Slot, T> Arena<I, T> {
    /// The slot the next [`Arena::place`] fills.
    pub(super) fn next(&self) -> I {
        self.free.last().copied().unwrap_or_else(|| I::from_slot(self.items.len() as u32))
    }

    /// Stores `item` in the slot [`Arena::next`] named.
    pub(super) fn place(&mut self, item: T) {
        match self.free.pop() {
            Some(slot) => self.items[slot.slot()] = item,
            None => {
                // Growing by an eighth rather than doubling: the arenas hold a run's largest
                // allocations, and doubling leaves up to half of one unused for the rest of the
                // run. The extra reallocations are cheap where it matters: large blocks are
                // remapped, not copied.
                if self.items.len() == self.items.capacity() {
                    self.items.reserve_exact(self.items.len() / 8 + 16);
                }
                self.items.push(item);
            }
        }
    }

    /// Gives `slot` back, holding `vacant` until it is filled again.
    pub(super) fn release(&mut self, slot: I, vacant: T) {
        self.items[slot.slot()] = vacant;
        self.free.push(slot);
    }

    pub(super) fn get(&self, slot: I) -> Option<&T> {
        self.items.get(slot.slot())
    }

    /// Every slot ever filled, released ones included.
    pub(super) fn slots(&self) -> impl Iterator<Item = I> + use<I, T> {
        (0..self.items.len() as u32).map(I::from_slot)
    }

    /// The items of every slot ever filled, released ones included, in slot order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }

    /// Whether no slot was ever filled.
    pub(super) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many slots hold an item that was not released.
    pub(super) fn held(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

impl<I: Slot, T> Index<I> for Arena<I, T> {
    type Output = T;
    fn index(&self, slot: I) -> &T {
        &self.items[slot.slot()]
    }
}

impl<I: Slot, T> IndexMut<I> for Arena<I, T> {
    fn index_mut(&mut self, slot: I) -> &mut T {
        &mut self.items[slot.slot()]
    }
}

impl<I: Slot, T> Index<&I> for Arena<I, T> {
    type Output = T;
    fn index(&self, slot: &I) -> &T {
        &self.items[slot.slot()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Ix(u32);

    impl Slot for Ix {
        fn from_slot(slot: u32) -> Self {
            Ix(slot)
        }
        fn slot(self) -> usize {
            self.0 as usize
        }
    }

    #[test]
    fn released_slots_are_filled_again_before_the_arena_grows() {
        let mut arena: Arena<Ix, &str> = Arena::default();
        for item in ["a", "b", "c"] {
            assert_eq!(arena.next(), Ix(arena.slots().count() as u32));
            arena.place(item);
        }
        arena.release(Ix(1), "-");
        assert_eq!((arena[Ix(1)], arena.held()), ("-", 2));
        assert_eq!(arena.next(), Ix(1));
        arena.place("d");
        assert_eq!(arena.iter().copied().collect::<Vec<_>>(), ["a", "d", "c"]);
        assert_eq!(arena.next(), Ix(3));
        arena[Ix(0)] = "e";
        assert_eq!(arena.get(Ix(0)), Some(&"e"));
        assert_eq!(arena.get(Ix(9)), None);
    }
}
