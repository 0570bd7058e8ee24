//! A generational slab: O(1) insert, remove and lookup by [`Token`], with stale tokens
//! detected by generation. This is how the engine cancels timers without searching the
//! heap: a timer event carries the token of what it belongs to, and a token whose
//! generation no longer matches is a tombstone that the handler drops at pop time.
//!
//! Memory is O(live entries): freed slots are reused.

/// A handle to a slab entry: index plus generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token {
    /// Slot index.
    pub index: u32,
    /// Generation of the slot when the token was issued.
    pub generation: u32,
}

struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

/// See the module docs.
pub struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    live: usize,
    peak: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Slab<T> {
    /// An empty slab.
    pub fn new() -> Self {
        Self { slots: Vec::new(), free: Vec::new(), live: 0, peak: 0 }
    }

    /// Store `value` and return its token.
    #[inline]
    pub fn insert(&mut self, value: T) -> Token {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            slot.value = Some(value);
            Token { index, generation: slot.generation }
        } else {
            let index = u32::try_from(self.slots.len()).expect("slab exceeds u32 slots");
            self.slots.push(Slot { generation: 0, value: Some(value) });
            Token { index, generation: 0 }
        }
    }

    /// Drop the value of a live token in place (no copy out); false for a stale token.
    #[inline]
    pub fn discard(&mut self, token: Token) -> bool {
        self.vacate(token).map(|slot| slot.value = None).is_some()
    }

    /// Free a live token's slot (a new generation, back on the free list) and hand it over
    /// still holding its value; None for a stale token.
    #[inline]
    fn vacate(&mut self, token: Token) -> Option<&mut Slot<T>> {
        let slot = self.slots.get_mut(token.index as usize)?;
        if slot.generation != token.generation || slot.value.is_none() {
            return None;
        }
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(token.index);
        self.live -= 1;
        Some(slot)
    }

    /// Remove and return the entry if the token is still live.
    #[inline]
    pub fn remove(&mut self, token: Token) -> Option<T> {
        self.vacate(token)?.value.take()
    }

    /// The entry, if the token is still live.
    #[inline]
    pub fn get(&self, token: Token) -> Option<&T> {
        let slot = self.slots.get(token.index as usize)?;
        if slot.generation == token.generation { slot.value.as_ref() } else { None }
    }

    /// The entry, mutably, if the token is still live.
    #[inline]
    pub fn get_mut(&mut self, token: Token) -> Option<&mut T> {
        let slot = self.slots.get_mut(token.index as usize)?;
        if slot.generation == token.generation { slot.value.as_mut() } else { None }
    }

    /// Tokens of the live entries, in slot order (deterministic). O(slots): for rare events.
    pub fn tokens(&self) -> Vec<Token> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.value.is_some())
            .map(|(i, s)| Token { index: i as u32, generation: s.generation })
            .collect()
    }

    /// Number of live entries.
    pub fn len(&self) -> usize {
        self.live
    }

    /// True when no entry is live.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The largest number of entries live at once.
    pub fn peak(&self) -> usize {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_tokens_are_rejected_and_slots_reused() {
        let mut s = Slab::new();
        let a = s.insert("a");
        assert_eq!(s.remove(a), Some("a"));
        let b = s.insert("b");
        assert_eq!(b.index, a.index, "slot reused");
        assert_eq!(s.get(a), None, "old generation is a tombstone");
        assert_eq!(s.remove(a), None);
        assert_eq!(s.get(b), Some(&"b"));
        assert_eq!(s.len(), 1);
        assert_eq!(s.peak(), 1);
    }

    #[test]
    fn discard_frees_like_remove() {
        let mut s = Slab::new();
        let a = s.insert(1u8);
        assert!(s.discard(a));
        assert!(!s.discard(a), "a stale token frees nothing");
        assert_eq!((s.get(a), s.len()), (None, 0));
        let b = s.insert(2);
        assert_eq!(b.index, a.index, "slot reused");
        assert_ne!(b.generation, a.generation);
        assert_eq!(s.get(b), Some(&2));
    }
}
