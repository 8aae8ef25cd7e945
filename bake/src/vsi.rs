//! An input's bytes through GDAL's virtual file systems (`/vsicurl/`,
//! `/vsis3/`, `/vsigs/`, `/vsiaz/`, `/vsizip/`, ...), for the fingerprint:
//! an input is identified by its content wherever it lives, so a DEM in
//! object storage is hashed through the very layer (and credentials, and
//! configuration) GDAL reads its pixels with.
//!
//! The key decision: the gdal crate wraps no general VSI reader, so this
//! module calls GDAL's C API for six functions (open, read, end-of-file, seek,
//! tell, close) behind a safe `Read`. It is the third audited `unsafe` exception in
//! the workspace (ARCHITECTURE.md): every block carries its `SAFETY:`
//! argument, the handle is owned by one value and closed once on drop.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io::{Error, ErrorKind, Read};
use std::ptr::NonNull;

use gdal_sys::{VSIFCloseL, VSIFEofL, VSIFOpenL, VSIFReadL, VSIFSeekL, VSIFTellL, VSILFILE};

/// Whether `path` names a file in one of GDAL's virtual file systems.
pub(crate) fn is_virtual(path: &std::path::Path) -> bool {
    path.to_str().is_some_and(|p| p.starts_with("/vsi"))
}

fn c_path(path: &str) -> std::io::Result<CString> {
    CString::new(path).map_err(|_| Error::new(ErrorKind::InvalidInput, "a path with a NUL byte"))
}

/// The size of `path` if GDAL can open it (an existing file, local or
/// remote), from a seek to its end.
pub(crate) fn size(path: &str) -> Option<u64> {
    VsiFile::open(path).ok()?.length().ok()
}

/// A file opened for reading through GDAL's virtual file systems.
pub(crate) struct VsiFile {
    handle: NonNull<VSILFILE>,
}

impl VsiFile {
    pub(crate) fn open(path: &str) -> std::io::Result<VsiFile> {
        let name = c_path(path)?;
        let mode = c"rb";
        // SAFETY: both arguments are NUL-terminated strings that outlive the
        // call; a null result is handled below.
        let handle = unsafe { VSIFOpenL(name.as_ptr(), mode.as_ptr()) };
        NonNull::new(handle)
            .map(|handle| VsiFile { handle })
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("GDAL cannot open {path} for reading")))
    }

    /// Moves the read position to `offset` bytes from the start.
    pub(crate) fn seek_to(&mut self, offset: u64) -> std::io::Result<()> {
        // SAFETY: the handle is open, owned by `self`.
        match unsafe { VSIFSeekL(self.handle.as_ptr(), offset, libc_seek::SET) } {
            0 => Ok(()),
            _ => Err(Error::other("GDAL cannot seek in the file")),
        }
    }

    /// The file's length; leaves the position at its start.
    fn length(&mut self) -> std::io::Result<u64> {
        // SAFETY: the handle is open, owned by `self`.
        let end = unsafe { VSIFSeekL(self.handle.as_ptr(), 0, libc_seek::END) };
        // SAFETY: as above.
        let length = unsafe { VSIFTellL(self.handle.as_ptr()) };
        // SAFETY: as above.
        let start = unsafe { VSIFSeekL(self.handle.as_ptr(), 0, libc_seek::SET) };
        if end != 0 || start != 0 {
            return Err(Error::other("GDAL cannot seek in the file"));
        }
        Ok(length)
    }
}

/// `whence` values of VSIFSeekL (C's SEEK_SET and SEEK_END).
mod libc_seek {
    pub(super) const SET: std::ffi::c_int = 0;
    pub(super) const END: std::ffi::c_int = 2;
}

impl Read for VsiFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // SAFETY: `buf` is valid for `buf.len()` bytes of writes, and the
        // handle is open (owned by `self`, closed only on drop).
        let n = unsafe { VSIFReadL(buf.as_mut_ptr().cast(), 1, buf.len(), self.handle.as_ptr()) };
        if n > buf.len() {
            return Err(Error::other("GDAL reported reading more bytes than were asked for"));
        }
        // SAFETY: as above, the handle is open.
        if n < buf.len() && unsafe { VSIFEofL(self.handle.as_ptr()) } == 0 {
            // A short read that is not the end: a network or storage error,
            // which must not pass for the end of the file.
            return Err(Error::other("GDAL's read stopped before the end of the file"));
        }
        Ok(n)
    }
}

impl Drop for VsiFile {
    fn drop(&mut self) {
        // SAFETY: the handle came from VSIFOpenL and is closed exactly once.
        unsafe {
            VSIFCloseL(self.handle.as_ptr());
        }
    }
}
