/* Content Service __NAME__ (spec 9). Load it with
     <script src="{base}/__FILE__" integrity="{integrity from /version}" crossorigin="anonymous" async></script>
   - On mount it checks {base}/v1/version at most once per 24 h (per page origin, in localStorage) and warns in the
     console when a newer version exists; with data-service-auto-update="on" on the script tag it replaces itself with
     the versioned URL of the newer version, under that version's SRI hash (off by default).
   - The embed script sends the analytics beacon once per Story on the page: every element with data-story-uuid, to
     its data-beacon-url (the `meta.beacon_url` of the Story read) or else {base}/v1/cdn/{data-space}/_beacon, with
     navigator.sendBeacon (fire-and-forget: it never blocks or breaks the page). Optional: data-segment-key, data-lang
     (else <html lang>). The referrer goes out as its origin only. ContentService.embed.scan() re-scans (SPAs).
   - With data-space, the embed script applies the Space's DOM overlay rules for the page ({base}/v1/cdn/{space}/
     dom-overlay?path=&lang=; data-lang or <html lang>; data-segment-key is sent as X-Service-Segment) after
     DOMContentLoaded and after each client-side navigation (history pushState/replaceState, popstate). A rule applies
     once per element (marked in a WeakMap shared by every copy of the script). Markup is parsed in an inert <template>
     and script, frames, style and on*, id, name or javascript: attributes are dropped before it is inserted (the
     server sanitized it already). data-overlay="off" turns it off; ContentService.embed.overlay() fetches and applies
     again (a Promise).
   - Forms marked <form data-service-form="{form slug}"> (the admin's Forms → Embed snippet) are sent as JSON to the
     public submit of data-space's Space (honeypot `_hp` moved off screen, `rendered_at`, ?lang= from data-lang or
     <html lang>), with the answer's success message, redirect (http(s) only) or per-field errors shown in the form.
   No dependencies; served minified (under 6 KB). */
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

  // Forms: <form data-service-form="<slug>"> sends itself as JSON to the public submit of data-space's Space, then
  // shows the success message (or follows a redirect) in [data-form-status], or each refused field's message in its
  // [data-error-for="<key>"]; data-thanks and data-failed hold the words when the answer has none.
  function form(f) {
    var t0 = Date.now(), hp = f.elements._hp, out = f.querySelector('[data-form-status]')
    if (f.csForm) return
    f.csForm = 1
    if (hp) hp.style.cssText = 'position:absolute;left:-9999px'
    function say(t) {
      if (out) out.textContent = t || data(f, 'failed') || ''
    }
    f.addEventListener('submit', function (e) {
      e.preventDefault()
      var v = {}, i, el, k, l = data(script, 'lang') || d.documentElement.lang, s = data(f, 'space') || data(script, 'space')
      for (el of f.elements) {
        if (!el.name || el == hp) continue
        if (el.type == 'checkbox') v[el.name] = el.checked
        else if (el.type == 'radio') el.checked && (v[el.name] = el.value)
        else if (el.value !== '') v[el.name] = el.type == 'number' ? Number(el.value) : el.value
      }
      for (el of f.querySelectorAll('[data-error-for]')) el.textContent = ''
      fetch(base + '/v1/cdn/' + encodeURIComponent(s) + '/forms/' + encodeURIComponent(data(f, 'service-form')) + (l ? '?lang=' + encodeURIComponent(l) : ''), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ data: v, _hp: hp ? hp.value : '', rendered_at: t0 }),
      })
        .then((r) => r.json().then((j) => [r.ok, j]))
        .then(([ok, j]) => {
          var x = j.data || {}
          if (ok && /^https?:/i.test(x.redirect_url)) return location.assign(x.redirect_url)
          ok && f.reset()
          say(ok ? x.success_message || data(f, 'thanks') : j.message)
          for (k in j.errors || {}) (el = f.querySelector('[data-error-for="' + k + '"]')) && (el.textContent = j.errors[k].join(' '))
        }, () => say())
    })
  }

  function scan() {
    for (var f of d.querySelectorAll('form[data-service-form]')) form(f)
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

  // DOM overlay (see the header). Short names: this part is a third of the script's budget.
  var done = (CS.done = CS.done || new WeakMap()), last, enc = encodeURIComponent

  // An event handler attribute, an id or name (DOM clobbering), or a URL that would run script.
  function bad(n, v) {
    return /^(on|id$|name$)/i.test(n) || /^[\s\0-\x1f]*(javascript|vbscript|data:text)/i.test(v)
  }

  // Markup parsed inert (a <template> runs nothing, loads nothing), then stripped of what could run.
  function frag(h) {
    var t = d.createElement('template'), e, n
    t.innerHTML = h
    for (e of t.content.querySelectorAll('*')) {
      if (/^(script|i?frame|object|embed|style|link|meta|base)$/i.test(e.localName)) e.remove()
      else for (n of e.getAttributeNames()) bad(n, e.getAttribute(n)) && e.removeAttribute(n)
    }
    return t.content
  }

  // Each rule once per element; actions: insert_before/insert_after, replace_html, replace_text, hide, set_attribute.
  function apply(rules) {
    for (var r of rules) {
      var a = r.action, c = r.content, l = [], e, m
      try {
        l = d.querySelectorAll(r.selector)
      } catch (x) {}
      for (e of l) {
        m = done.get(e) || {}
        if (m[r.id]) continue
        done.set(e, m)
        m[r.id] = 1
        if (a[0] == 'i') e[a.slice(7)](frag(c))
        else if (a == 'replace_html') e.replaceChildren(frag(c))
        else if (a == 'replace_text') e.textContent = c
        else if (a == 'hide') e.style.display = 'none'
        else bad(r.attribute, c) || e.setAttribute(r.attribute, c)
      }
    }
  }

  function overlay() {
    var s = data(script, 'space'), p = location.pathname, l = data(script, 'lang') || d.documentElement.lang, g = data(script, 'segment-key')
    if (!s || data(script, 'overlay') == 'off' || p == last) return
    last = p
    return fetch(base + '/v1/cdn/' + enc(s) + '/dom-overlay?path=' + enc(p) + (l ? '&lang=' + enc(l) : ''), { headers: g ? { 'X-Service-Segment': g } : {} })
      .then((r) => r.ok && r.json())
      .then((v) => v && location.pathname == p && apply(v.data.rules))
      ['catch'](() => {})
  }

  function nav() {
    setTimeout(overlay)
  }

  function mount() {
    if ('__COMPONENT__' === 'embed_js') {
      scan()
      overlay()
      for (let k of ['pushState', 'replaceState']) {
        let f = history[k]
        history[k] = function () {
          f.apply(this, arguments)
          nav()
        }
      }
      w.addEventListener('popstate', nav)
    }
    check()
  }

  CS.__GLOBAL__ = {
    version: VERSION,
    base: base,
    api: base + '/v1',
    src: script.src,
    scan: scan,
    overlay: function () {
      last = 0
      return overlay()
    },
  }
  if (d.readyState === 'loading') d.addEventListener('DOMContentLoaded', mount)
  else mount()
})(window, document)
