/* Content Service __NAME__ (spec 9). Load it with
     <script src="{base}/__FILE__" integrity="{integrity from /version}" crossorigin="anonymous" async></script>
   - On mount it checks {base}/v1/version at most once per 24 h (per page origin, in localStorage) and warns in the
     console when a newer version exists; with data-service-auto-update="on" on the script tag it replaces itself with
     the versioned URL of the newer version, under that version's SRI hash (off by default).
   - The embed script sends the analytics beacon once per Story on the page: every element with data-story-uuid, to
     its data-beacon-url (the `meta.beacon_url` of the Story read) or else {base}/v1/cdn/{data-space}/_beacon, with
     navigator.sendBeacon (fire-and-forget: it never blocks or breaks the page). Optional: data-segment-key, data-lang
     (else <html lang>). The referrer goes out as its origin only. ContentService.embed.scan() re-scans (SPAs).
   No dependencies; served minified (under 4 KB). */
(function (w, d) {
  var script = d.currentScript
  if (!script) return
  var VERSION = '__VERSION__'
  var base = new URL(script.src, location.href).origin
  var CS = (w.ContentService = w.ContentService || {})
  // Shared by every copy of the script on the page (an auto-update reloads it): each Story is counted once.
  var sent = (CS.sent = CS.sent || {})
  var KEY = 'content-service:__COMPONENT__:version-check'
  var DAY = 864e5

  function data(el, name) {
    return el.getAttribute('data-' + name)
  }

  function newer(a, b) {
    var x = String(a).split('.').map(Number), y = b.split('.').map(Number)
    for (var i = 0; i < 3; i++) if ((x[i] || 0) !== (y[i] || 0)) return (x[i] || 0) > (y[i] || 0)
    return false
  }

  function update(c) {
    var s = d.createElement('script')
    // The new copy keeps the tag's data attributes but not the auto-update switch: it never swaps again.
    for (var i = 0; i < script.attributes.length; i++) {
      var a = script.attributes[i]
      if (a.name.indexOf('data-') === 0 && a.name !== 'data-service-auto-update') s.setAttribute(a.name, a.value)
    }
    s.src = c.versioned_url
    if (c.integrity) {
      s.integrity = c.integrity
      s.crossOrigin = 'anonymous'
    }
    script.parentNode && script.parentNode.replaceChild(s, script)
  }

  function check() {
    try {
      if (Date.now() - Number(localStorage.getItem(KEY) || 0) < DAY) return
      localStorage.setItem(KEY, String(Date.now()))
    } catch (e) {
      /* storage blocked: check on every mount */
    }
    fetch(base + '/v1/version', { credentials: 'omit' })
      .then(function (r) {
        return r.ok ? r.json() : null
      })
      .then(function (v) {
        var c = v && v.components && v.components.__COMPONENT__
        if (!c || !newer(c.latest, VERSION)) return
        console.warn('[content-service] __FILE__ ' + VERSION + ' is outdated; ' + c.latest + ' is available' + (c.changelog ? ': ' + c.changelog : ''))
        if (data(script, 'service-auto-update') === 'on' && c.versioned_url) update(c)
      })
      ['catch'](function () {
        /* never break a page */
      })
  }

  function device() {
    var width = w.innerWidth || 0
    return /Mobi|Android.+Mobile|iPhone/i.test(navigator.userAgent) || width < 768 ? 'mobile' : width < 1025 ? 'tablet' : 'desktop'
  }

  function scan() {
    if (!navigator.sendBeacon) return
    var els = d.querySelectorAll('[data-story-uuid]')
    for (var i = 0; i < els.length; i++) {
      var el = els[i], uuid = data(el, 'story-uuid'), space = data(el, 'space') || data(script, 'space')
      var url = data(el, 'beacon-url') || (space ? base + '/v1/cdn/' + encodeURIComponent(space) + '/_beacon' : '')
      if (!uuid || !url || sent[uuid]) continue
      sent[uuid] = 1
      var body = { story_uuid: uuid, device: device() }, seg = data(el, 'segment-key'), lang = data(el, 'lang') || d.documentElement.lang
      if (seg) body.segment_key = seg
      if (lang) body.lang = lang
      try {
        if (d.referrer) body.referrer = new URL(d.referrer).origin
      } catch (e) {}
      try {
        // A string goes as text/plain: a CORS-safelisted type, so no preflight (sendBeacon cannot make one).
        navigator.sendBeacon(url, JSON.stringify(body))
      } catch (e) {}
    }
  }

  function mount() {
    if ('__COMPONENT__' === 'embed_js') scan()
    check()
  }

  CS.__GLOBAL__ = { version: VERSION, base: base, api: base + '/v1', src: script.src, scan: scan }
  if (d.readyState === 'loading') d.addEventListener('DOMContentLoaded', mount)
  else mount()
})(window, document)
