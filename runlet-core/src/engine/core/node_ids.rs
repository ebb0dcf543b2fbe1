//! The public ids of the nodes a run touched lately (spec §4.2), so that a node's id is built
//! once for the several events that name it (about nine for a call) and shared by them. Bounded
//! and keyed by node slot: the held nodes of a wide loop carry no id of their own, and a slot the
//! arena takes back forgets the id it had.

use std::sync::Arc;

use parking_lot::Mutex;

use super::state::NodeIx;

/// How many ids are kept: more than the calls a `limit 64` loop has in flight.
const KEPT: usize = 256;

/// The places a core starts with, grown (by doubling, up to [`KEPT`]) as its slots are used: a
/// short run fills a few hundred bytes rather than every place.
const FIRST_PLACES: usize = 16;

/// A node and its id.
type Named = (NodeIx, Arc<str>);

/// The ids of recently named nodes, each at the place its slot number maps to. Behind a lock
/// only because the core is shared by reference across awaits; its one user never contends.
#[derive(Debug, Default)]
pub(super) struct RecentNodeIds {
    places: Mutex<Vec<Option<Named>>>,
}

impl RecentNodeIds {
    /// The id of `node`: the kept one, or the one `build` makes, kept from now on.
    pub(super) fn get_or_build(&self, node: NodeIx, build: impl FnOnce() -> Arc<str>) -> Arc<str> {
        let mut places = self.places.lock();
        let place = place_of(node);
        if place >= places.len() {
            places.resize((place + 1).next_power_of_two().clamp(FIRST_PLACES, KEPT), None);
        }
        match &mut places[place] {
            Some((kept, id)) if *kept == node => Arc::clone(id),
            place => {
                let id = build();
                *place = Some((node, Arc::clone(&id)));
                id
            }
        }
    }

    /// `node`'s slot was given back: whatever is built there next is another node.
    pub(super) fn forget(&self, node: NodeIx) {
        if let Some(place) = self.places.lock().get_mut(place_of(node))
            && place.as_ref().is_some_and(|(kept, _)| *kept == node)
        {
            *place = None;
        }
    }

    /// Every slot may hold another node now (a core restored from an image).
    pub(super) fn forget_all(&self) {
        self.places.lock().clear();
    }
}

fn place_of(node: NodeIx) -> usize {
    node.0 as usize % KEPT
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// The id `ids` gives `node`, and whether it had to be built.
    fn id_of(ids: &RecentNodeIds, node: u32) -> (Arc<str>, bool) {
        let built = Cell::new(false);
        let id = ids.get_or_build(NodeIx(node), || {
            built.set(true);
            Arc::from(format!("n{node}"))
        });
        (id, built.get())
    }

    #[test]
    fn an_id_is_built_once_while_its_place_keeps_it_however_far_the_places_grow() {
        let ids = RecentNodeIds::default();
        assert_eq!(id_of(&ids, 3), (Arc::from("n3"), true));
        // Node 200 grows the places past node 3's without forgetting it.
        assert_eq!(id_of(&ids, 200), (Arc::from("n200"), true));
        assert_eq!(id_of(&ids, 3), (Arc::from("n3"), false));
        assert_eq!(id_of(&ids, 200), (Arc::from("n200"), false));
        // Node 3 + KEPT takes node 3's place; node 3 is then built again.
        let far = 3 + KEPT as u32;
        assert_eq!(id_of(&ids, far), (Arc::from(format!("n{far}")), true));
        assert_eq!(id_of(&ids, 3), (Arc::from("n3"), true));
    }

    #[test]
    fn a_forgotten_slot_builds_its_next_node_afresh() {
        let ids = RecentNodeIds::default();
        id_of(&ids, 7);
        ids.forget(NodeIx(7));
        assert!(id_of(&ids, 7).1);
        // Forgetting a node whose place was never made is nothing.
        ids.forget(NodeIx(1_000));
        ids.forget_all();
        assert!(id_of(&ids, 7).1);
    }
}
