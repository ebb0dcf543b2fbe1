//! Serde for values inside a serialized run state (the engine's snapshots, spec §5.3): a value is
//! its RCVE bytes, so it round-trips exactly and is decoded under the same checks as a journaled
//! value (a corrupt image is an error, never a different value); a digest is its printed text.
//! Labels and labelled values derive their serde from these.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::digest::Digest;
use super::model::{List, Object, Value};
use super::rcve;

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&rcve::encode(self))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        let bytes = serde_bytes::ByteBuf::deserialize(d)?;
        rcve::decode(&bytes).map_err(|e| D::Error::custom(format!("a value of the image: {e}")))
    }
}

impl Serialize for List {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Value::List(self.clone()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for List {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<List, D::Error> {
        match Value::deserialize(d)? {
            Value::List(list) => Ok(list),
            other => Err(D::Error::custom(format!("expected a list in the image, found {}", other.kind()))),
        }
    }
}

impl Serialize for Object {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Value::Object(self.clone()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Object, D::Error> {
        match Value::deserialize(d)? {
            Value::Object(object) => Ok(object),
            other => {
                Err(D::Error::custom(format!("expected an object in the image, found {}", other.kind())))
            }
        }
    }
}

impl<'de> Deserialize<'de> for Digest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Digest, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Labelled, Labels, Segment, Sensitivity, parse_json, sha256};

    fn round_trip<T: Serialize + for<'de> Deserialize<'de>>(value: &T) -> T {
        let bytes = rmp_serde::to_vec(value).expect("encodes");
        rmp_serde::from_slice(&bytes).expect("decodes")
    }

    #[test]
    fn values_labels_and_digests_round_trip_exactly() {
        let value = parse_json(r#"{"a": [1, 2.5, "x", null, true], "b": {"c": -0.0}}"#).expect("json");
        assert_eq!(round_trip(&value), value);
        let labels = Labels::at_path(&[Segment::Key("a".into()), Segment::Index(1)], Sensitivity::Secret);
        let labelled = Labelled::new(value.clone(), labels);
        assert_eq!(round_trip(&labelled), labelled);
        let digest = sha256(&value);
        assert_eq!(round_trip(&digest), digest);
    }

    #[test]
    fn bytes_that_are_not_canonical_are_an_error() {
        let bytes = rmp_serde::to_vec(&serde_bytes::Bytes::new(&[0xff, 0x00])).expect("encodes");
        let error = rmp_serde::from_slice::<Value>(&bytes).expect_err("not RCVE");
        assert!(error.to_string().contains("a value of the image"), "{error}");
        let list = rmp_serde::to_vec(&Value::Int(3)).expect("encodes");
        assert!(rmp_serde::from_slice::<List>(&list).is_err());
    }
}
