/* Content Service service-admin.js: the in-page editing bridge (docs/in-page-editing.md). A site includes
     <script src="{base}/service-admin.js" data-space="{space slug}" async></script>
   For a visitor it does nothing: no request, no DOM change; window.ServiceAdmin.active is false.
   When the page was opened from the editor's Preview button (#service-preview=<token>&space=<slug> in the URL) it
   takes the token out of the URL and, when <slug> is the Space the tag names in data-space (one or more slugs,
   separated by spaces), keeps it in this tab's sessionStorage and asks the API whether it is a valid preview token
   of that Space (GET {base}/v1/cdn/{space}/preview); a token of any other Space is ignored. Only then does it:
   - outline every [data-story-uuid] element and add an "Edit" link to that Story in the admin app;
   - fill every [data-story-field="<path>"] inside an element with data-story-path="<full path>" with the draft's
     value at that path (`name`, `content/blocks/0/headline`), as text only;
   - answer ServiceAdmin.draft(path, {lang}) with the draft Story (the `data` of the read), else null
     (ServiceAdmin.ready: a Promise of whether the preview is on);
   - with #service-segment=<key> in the link as well (the admin's "Preview as this segment"), send it as
     X-Service-Segment on the draft reads, so they answer that segment's variants;
   - dispatch `service-admin:ready` on document, and `service-admin:draft` ({detail: {story}}) on each filled element.
   Content is never parsed as HTML and nothing is executed; styles are set through the CSSOM only (a strict CSP
   needs only connect-src for {base}). */
(function (w, d) {
  var script = d.currentScript
  if (!script) return
  var VERSION = '__VERSION__'
  var base = new URL(script.src, location.href).origin
  var KEY = 'content-service:preview'
  var UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
  var SLUG = /^[a-z][a-z0-9-]{0,63}$/
  var TOKEN = /^p_[\w-]{12}\.[\w-]{43}$/
  var SEGMENT = /^[a-z][a-z0-9_-]{0,63}$/
  // The Spaces this page shows (data-space): a preview of any other Space is never turned on here, so a link
  // with someone else's token cannot put foreign drafts into the page.
  var pinned = ' ' + (script.getAttribute('data-space') || '') + ' '
  function pins(slug) {
    return SLUG.test(slug || '') && pinned.indexOf(' ' + slug + ' ') >= 0
  }
  var session = null
  var adminUrl = ''
  var drafts = {}
  var layer = null
  var CS = (w.ContentService = w.ContentService || {})
  var api = (CS.admin = w.ServiceAdmin = {
    version: VERSION,
    base: base,
    api: base + '/v1',
    src: script.src,
    active: false,
    space: null,
    draft: draft,
    scan: scan,
    ready: null,
  })

  function css(el, props) {
    for (var k in props) el.style.setProperty(k, props[k])
    return el
  }

  function forget() {
    try {
      sessionStorage.removeItem(KEY)
    } catch (e) {}
  }

  /** The token of the fragment (then removed from the URL), else this tab's, else null. */
  function take() {
    var s = null
    if (location.hash.indexOf('service-preview=') >= 0) {
      var p = new URLSearchParams(location.hash.slice(1))
      s = { token: p.get('service-preview'), space: p.get('space') }
      // "Preview as this segment" (the admin's segments and variants): draft reads name the segment.
      if (SEGMENT.test(p.get('service-segment') || '')) s.segment = p.get('service-segment')
      p['delete']('service-preview')
      p['delete']('space')
      p['delete']('service-segment')
      var rest = p.toString()
      try {
        history.replaceState(history.state, '', location.pathname + location.search + (rest ? '#' + rest : ''))
      } catch (e) {}
      if (!pinned.trim()) console.warn('[content-service] service-admin.js: no data-space on its tag, so no preview')
      if (TOKEN.test(s.token || '') && pins(s.space)) {
        try {
          sessionStorage.setItem(KEY, JSON.stringify(s))
        } catch (e) {}
        return s
      }
      // A malformed preview link, or one of a Space this page does not show, ends any earlier preview of this tab.
      forget()
      return null
    }
    try {
      s = JSON.parse(sessionStorage.getItem(KEY) || 'null')
    } catch (e) {}
    // A preview kept for another page of the site (another Space) is not this page's.
    return s && TOKEN.test(s.token) && pins(s.space) ? s : null
  }

  function get(path) {
    var headers = { Authorization: 'Bearer ' + session.token }
    if (session.segment && SEGMENT.test(session.segment)) headers['X-Service-Segment'] = session.segment
    return fetch(base + '/v1/cdn/' + session.space + path, {
      headers: headers,
      credentials: 'omit',
      cache: 'no-store',
    })
  }

  /** The draft Story at a full path (`/blog/hello` or `blog/hello`), or null. */
  function draft(path, opts) {
    return api.ready.then(function (active) {
      return active && typeof path === 'string' ? fetchDraft(path, opts) : null
    })
  }

  function fetchDraft(path, opts) {
    var lang = opts && opts.lang ? String(opts.lang) : ''
    var segs = path.split('/').filter(Boolean).map(encodeURIComponent)
    if (!segs.length) return Promise.resolve(null)
    var url = '/stories/' + segs.join('/') + '?version=draft' + (lang ? '&lang=' + encodeURIComponent(lang) : '')
    return (drafts[url] =
      drafts[url] ||
      get(url)
        .then(function (r) {
          return r.ok ? r.json() : null
        })
        .then(function (b) {
          return b && b.data ? b.data : null
        })
        ['catch'](function () {
          return null
        }))
  }

  function valueAt(story, path) {
    var v = story
    var parts = String(path).split('/')
    for (var i = 0; i < parts.length; i++) {
      if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, parts[i])) return undefined
      v = v[parts[i]]
    }
    return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined
  }

  function fill(el) {
    var uuid = el.getAttribute('data-story-uuid')
    draft(el.getAttribute('data-story-path') || '', { lang: el.getAttribute('data-lang') }).then(function (story) {
      // The page says which Story the element shows; a path that leads to another Story fills nothing.
      if (!story || (uuid && story.uuid !== uuid)) return
      var fields = [el].concat([].slice.call(el.querySelectorAll('[data-story-field]')))
      for (var i = 0; i < fields.length; i++) {
        var f = fields[i].getAttribute('data-story-field')
        var text = f ? valueAt(story, f) : undefined
        if (text !== undefined) fields[i].textContent = text
      }
      el.dispatchEvent(new CustomEvent('service-admin:draft', { bubbles: true, detail: { story: story } }))
      place()
    })
  }

  function button() {
    return css(d.createElement('a'), {
      position: 'absolute',
      'z-index': '2147483647',
      background: '#4338ca',
      color: '#fff',
      font: '600 12px/1.5 system-ui, sans-serif',
      padding: '2px 8px',
      'border-radius': '4px',
      'text-decoration': 'none',
      'box-shadow': '0 1px 3px rgba(0,0,0,.3)',
    })
  }

  var edits = []
  /** Positions the Edit links just above the top left corner of their elements (over the content at the very top). */
  function place() {
    for (var i = 0; i < edits.length; i++) {
      var r = edits[i][0].getBoundingClientRect()
      css(edits[i][1], { top: Math.max(0, r.top + w.scrollY - 26) + 'px', left: r.left + w.scrollX - 4 + 'px' })
    }
  }

  /** (Re)draws the outlines and Edit links, and fills draft content; call it after client-side navigation. */
  function scan() {
    if (!api.active) return
    if (layer) layer.parentNode && layer.parentNode.removeChild(layer)
    layer = css(d.createElement('div'), { position: 'absolute', top: '0', left: '0', width: '0', height: '0' })
    layer.setAttribute('data-service-admin', '')
    edits = []
    var els = d.querySelectorAll('[data-story-uuid]')
    for (var i = 0; i < els.length; i++) {
      var el = els[i], uuid = el.getAttribute('data-story-uuid') || ''
      if (!UUID.test(uuid)) continue
      css(el, { outline: '2px dashed #4338ca', 'outline-offset': '2px' })
      var a = button()
      a.href = adminUrl + '/stories/' + uuid.toLowerCase()
      a.target = '_blank'
      a.rel = 'noopener'
      a.textContent = 'Edit'
      a.setAttribute('data-service-admin-edit', uuid.toLowerCase())
      a.setAttribute('aria-label', 'Edit this Story in the admin app')
      layer.appendChild(a)
      edits.push([el, a])
      if (el.getAttribute('data-story-path')) fill(el)
    }
    var bar = css(d.createElement('div'), {
      position: 'fixed',
      right: '12px',
      bottom: '12px',
      'z-index': '2147483647',
      background: '#1e1b4b',
      color: '#fff',
      font: '12px/1.5 system-ui, sans-serif',
      padding: '6px 10px',
      'border-radius': '6px',
    })
    bar.setAttribute('role', 'status')
    bar.textContent = 'Preview: drafts of ' + session.space + ' '
    var exit = css(d.createElement('button'), { font: 'inherit', 'margin-left': '6px', cursor: 'pointer' })
    exit.type = 'button'
    exit.textContent = 'Exit preview'
    exit.onclick = function () {
      forget()
      location.reload()
    }
    bar.appendChild(exit)
    layer.appendChild(bar)
    d.body.appendChild(layer)
    place()
  }

  session = take()
  if (!session) {
    api.ready = Promise.resolve(false)
    return
  }
  api.ready = get('/preview')
    .then(function (r) {
      if (r.status === 401 || r.status === 404) forget()
      return r.ok ? r.json() : null
    })
    .then(function (b) {
      var s = b && b.data
      if (!s || s.space !== session.space || !/^https?:\/\//.test(s.admin_url || '')) return false
      adminUrl = s.admin_url
      api.active = true
      api.space = s.space
      api.expiresAt = s.expires_at
      var start = function () {
        scan()
        w.addEventListener('resize', place)
        w.addEventListener('load', place)
        d.dispatchEvent(new CustomEvent('service-admin:ready', { detail: { space: s.space, expires_at: s.expires_at } }))
      }
      if (d.readyState === 'loading') d.addEventListener('DOMContentLoaded', start)
      else start()
      return true
    })
    ['catch'](function () {
      /* never break a page */
      return false
    })
})(window, document)
