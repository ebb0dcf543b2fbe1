//! The public ids of the nodes a run touched lately (spec §4.2), so that a node's id is built
//! once for the several events that name it (about nine for a call) and shared by them. Bounded
//! and keyed by node slot: the held nodes of a wide loop carry no id of their own, and a slot the
//! arena takes back forgets the id it had.

use std::sync::Arc;

use parking_lot::Mutex;

use super::state::NodeIx;

/// How many ids are kept: more than the calls a `limit 64` loop has in flight.
const KEPT: usize = 256;

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
        if places.is_empty() {
            places.resize(KEPT, None);
        }
        match &mut places[place_of(node)] {
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
