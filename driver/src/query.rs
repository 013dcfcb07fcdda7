//! Query pools (timestamps) and events, each backed by a small GEM object the command
//! streamer writes (PIPE_CONTROL post-sync timestamps, MI_STORE_DATA_IMM) and the CPU reads.

use std::ffi::c_void;

use ash::vk;
use ash::vk::Handle;

use crate::bo::{GemBo, Heap};
use crate::device::{dev, Device};
use crate::error::{DriverError, Result};
use crate::ffi;

/// Bytes per query: the 64-bit value, then a 64-bit availability word.
pub const QUERY_STRIDE: u64 = 16;

pub struct QueryPool {
    pub bo: GemBo,
    pub count: u32,
}

impl QueryPool {
    pub fn slot_address(&self, query: u32) -> Result<u64> {
        if query >= self.count {
            return Err(DriverError::InvalidArgument(format!(
                "query {query} of a {}-query pool",
                self.count
            )));
        }
        Ok(self.bo.va + QUERY_STRIDE * u64::from(query))
    }

    fn read(&self, query: u32) -> (u64, bool) {
        let mut b = [0u8; 16];
        self.bo
            .read((QUERY_STRIDE * u64::from(query)) as usize, &mut b);
        let v = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
        let avail = u64::from_le_bytes(b[8..].try_into().unwrap_or_default());
        (v, avail != 0)
    }
}

pub struct Event {
    /// One dword: 1 set, 0 reset.
    pub bo: GemBo,
}

impl Event {
    fn get(&self) -> u32 {
        let mut b = [0u8; 4];
        self.bo.read(0, &mut b);
        u32::from_le_bytes(b)
    }
    fn set(&self, v: u32) {
        self.bo.write(0, &v.to_le_bytes());
    }
}

/// vkResetQueryPool (VK_EXT_host_query_reset, core 1.2): the CPU clears the availability
/// words, as vkCmdResetQueryPool does from the command streamer.
pub(crate) unsafe extern "system" fn reset_query_pool(
    device: vk::Device,
    pool: vk::QueryPool,
    first: u32,
    count: u32,
) {
    ffi::void("vkResetQueryPool", || {
        // SAFETY: a live device per the spec.
        let q = unsafe { dev(device) }?.query_pools.get(pool.as_raw())?;
        let end = first
            .checked_add(count)
            .filter(|&e| e <= q.count)
            .ok_or_else(|| {
                DriverError::InvalidArgument(format!(
                    "queries {first}..+{count} of a {}-query pool",
                    q.count
                ))
            })?;
        for i in first..end {
            q.bo.write(
                (QUERY_STRIDE * u64::from(i) + 8) as usize,
                &0u64.to_le_bytes(),
            );
        }
        Ok(())
    })
}

crate::device::registry_creates! {
    create_query_pool, "vkCreateQueryPool", QueryPoolCreateInfo => query_pools, QueryPool, "pQueryPool", new_query_pool;
}

/// The object vkCreateQueryPool makes of its create info.
fn new_query_pool(d: &Device, info: &vk::QueryPoolCreateInfo<'_>) -> Result<QueryPool> {
    if info.query_type != vk::QueryType::TIMESTAMP {
        return Err(DriverError::NotImplemented(
            "query types other than timestamps",
        ));
    }
    let bo = GemBo::new(
        &d.adapter.drm,
        &d.va,
        Heap::General,
        QUERY_STRIDE * u64::from(info.query_count.max(1)),
    )?;
    Ok(QueryPool {
        bo,
        count: info.query_count,
    })
}

crate::device::registry_destroys! {
    destroy_query_pool, "vkDestroyQueryPool", vk::QueryPool => query_pools;
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "system" fn get_query_pool_results(
    device: vk::Device,
    pool: vk::QueryPool,
    first: u32,
    count: u32,
    data_size: usize,
    p_data: *mut c_void,
    stride: u64,
    flags: vk::QueryResultFlags,
) -> vk::Result {
    ffi::result("vkGetQueryPoolResults", || {
        // SAFETY: a live device per the spec.
        let d = unsafe { dev(device) }?;
        let q = d.query_pools.get(pool.as_raw())?;
        let wide = flags.contains(vk::QueryResultFlags::TYPE_64);
        let with_avail = flags.contains(vk::QueryResultFlags::WITH_AVAILABILITY);
        if flags.contains(vk::QueryResultFlags::WAIT) {
            // Results become available when the submission that writes them completes.
            d.queue().obj.wait_idle()?;
        }
        let mut result = vk::Result::SUCCESS;
        let item = if wide { 8 } else { 4 };
        let per = item * (1 + with_avail as usize);
        for i in 0..count {
            let at = (stride * u64::from(i)) as usize;
            if at + per > data_size {
                return Err(DriverError::InvalidArgument("pData too small".into()));
            }
            let (v, avail) = q.read(first + i);
            if !avail {
                result = vk::Result::NOT_READY;
            }
            let mut vals = Vec::new();
            if avail || flags.contains(vk::QueryResultFlags::PARTIAL) {
                vals.push(Some(v));
            } else {
                vals.push(None);
            }
            if with_avail {
                vals.push(Some(avail as u64));
            }
            for (j, val) in vals.into_iter().enumerate() {
                let Some(val) = val else { continue };
                let dst = p_data.cast::<u8>().wrapping_add(at + j * item);
                // SAFETY: dst lies inside the dataSize bytes of pData (checked above).
                unsafe {
                    if wide {
                        dst.cast::<u64>().write_unaligned(val);
                    } else {
                        dst.cast::<u32>().write_unaligned(val as u32);
                    }
                }
            }
        }
        Ok(result)
    })
}

crate::device::registry_creates! {
    create_event, "vkCreateEvent", EventCreateInfo => events, Event, "pEvent", new_event;
}

/// The object vkCreateEvent makes: a page of GPU memory holding its status (nothing of the
/// create info is used: its only member, `flags`, adds nothing Ferrite needs).
fn new_event(d: &Device, _info: &vk::EventCreateInfo<'_>) -> Result<Event> {
    Ok(Event {
        bo: GemBo::new(&d.adapter.drm, &d.va, Heap::General, 4096)?,
    })
}

crate::device::registry_destroys! {
    destroy_event, "vkDestroyEvent", vk::Event => events;
}

pub(crate) unsafe extern "system" fn get_event_status(
    device: vk::Device,
    event: vk::Event,
) -> vk::Result {
    ffi::result("vkGetEventStatus", || {
        // SAFETY: a live device per the spec.
        let d = unsafe { dev(device) }?;
        d.check_lost()?;
        Ok(match d.events.get(event.as_raw())?.get() {
            0 => vk::Result::EVENT_RESET,
            _ => vk::Result::EVENT_SET,
        })
    })
}

pub(crate) unsafe extern "system" fn set_event(device: vk::Device, event: vk::Event) -> vk::Result {
    ffi::result("vkSetEvent", || {
        // SAFETY: a live device per the spec.
        unsafe { dev(device) }?.events.get(event.as_raw())?.set(1);
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn reset_event(
    device: vk::Device,
    event: vk::Event,
) -> vk::Result {
    ffi::result("vkResetEvent", || {
        // SAFETY: a live device per the spec.
        unsafe { dev(device) }?.events.get(event.as_raw())?.set(0);
        Ok(vk::Result::SUCCESS)
    })
}
