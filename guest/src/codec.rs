//! Binary encoding of index snapshots (see [`crate::index`]'s `snapshot_section`): postcard for
//! structure, raw little-endian bytes for the large numeric arrays (a copy instead of one
//! varint per element).

use serde::{Deserialize, Serialize, Serializer};

/// `value` in postcard's encoding.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    // Serializing into a growable vector fails only for types that cannot say their length
    // up front, which none of the snapshot's types are.
    postcard::to_allocvec(value).unwrap_or_else(|e| panic!("encoding a snapshot section: {e}"))
}

/// Decode a `T` that must take all of `bytes`.
pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, String> {
    let (value, rest) = postcard::take_from_bytes(bytes).map_err(|e| e.to_string())?;
    if rest.is_empty() {
        Ok(value)
    } else {
        Err(format!("{} unexpected bytes at the end", rest.len()))
    }
}

/// A value with a fixed-size little-endian form.
pub trait Pod: Copy {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! pod {
    ($($t:ty),*) => {$(
        impl Pod for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn get(bytes: &[u8]) -> Self {
                let mut b = [0; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
        }
    )*};
}

pod!(u8, u16, u32, i32, f32);

impl<const N: usize> Pod for [u32; N] {
    const SIZE: usize = 4 * N;
    #[inline]
    fn put(self, out: &mut Vec<u8>) {
        for x in self {
            x.put(out);
        }
    }
    #[inline]
    fn get(bytes: &[u8]) -> Self {
        std::array::from_fn(|i| u32::get(&bytes[4 * i..4 * i + 4]))
    }
}

/// A slice serialized as one byte string of its elements' little-endian forms; read back with
/// [`from_raw`] from a borrowed `&[u8]`.
pub struct Raw<'a, T>(pub &'a [T]);

impl<T: Pod> Serialize for Raw<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = Vec::with_capacity(self.0.len() * T::SIZE);
        for &x in self.0 {
            x.put(&mut out);
        }
        s.serialize_bytes(&out)
    }
}

/// The elements of a [`Raw`] byte string.
pub fn from_raw<T: Pod>(bytes: &[u8]) -> Result<Vec<T>, String> {
    if !bytes.len().is_multiple_of(T::SIZE) {
        return Err(format!(
            "{} bytes is not a whole number of {}-byte values",
            bytes.len(),
            T::SIZE
        ));
    }
    Ok(bytes.chunks_exact(T::SIZE).map(T::get).collect())
}

/// The little-endian forms of `values`, concatenated (what [`extend_raw`] reads).
pub fn put_raw<T: Pod>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * T::SIZE);
    for &x in values {
        x.put(&mut out);
    }
    out
}

/// Append the values of `bytes` (from [`put_raw`]) to `out`.
pub fn extend_raw<T: Pod>(out: &mut Vec<T>, bytes: &[u8]) {
    debug_assert!(bytes.len().is_multiple_of(T::SIZE));
    out.extend(bytes.chunks_exact(T::SIZE).map(T::get));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_arrays_round_trip() {
        let v: Vec<u32> = vec![0, 1, u32::MAX, 0x0102_0304];
        let f: Vec<f32> = vec![0.0, -1.5, f32::MAX, f32::MIN_POSITIVE];
        let l: Vec<[u32; 3]> = vec![[1, 2, 3], [u32::MAX, 0, 7]];
        let bytes = encode(&(Raw(&v), Raw(&f), Raw(&l), "text"));
        let (a, b, c, s): (&[u8], &[u8], &[u8], String) = decode(&bytes).unwrap();
        assert_eq!(from_raw::<u32>(a).unwrap(), v);
        assert_eq!(from_raw::<f32>(b).unwrap(), f);
        assert_eq!(from_raw::<[u32; 3]>(c).unwrap(), l);
        assert_eq!(s, "text");
    }

    #[test]
    fn raw_chunks_append_to_one_array() {
        let v: Vec<u32> = (0..1000).map(|i| i * 7919).collect();
        let mut back: Vec<u32> = Vec::with_capacity(v.len());
        for part in v.chunks(333) {
            extend_raw(&mut back, &put_raw(part));
        }
        assert_eq!(back, v);
        assert_eq!(
            put_raw(&v),
            from_raw::<u32>(&put_raw(&v)).map(|w| put_raw(&w)).unwrap()
        );
    }

    #[test]
    fn damaged_input_is_an_error() {
        let bytes = encode(&(Raw(&[1u32, 2, 3][..]), 7u32));
        // Cut short, too long, or a byte string whose length is not a multiple of the size.
        assert!(decode::<(&[u8], u32)>(&bytes[..bytes.len() - 1]).is_err());
        let mut long = bytes.clone();
        long.push(0);
        assert!(
            decode::<(&[u8], u32)>(&long)
                .unwrap_err()
                .contains("unexpected bytes")
        );
        assert!(from_raw::<u32>(&[1, 2, 3]).unwrap_err().contains("4-byte"));
    }
}
