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
   Framed by the admin app's visual editor (and only then), it also opens a versioned postMessage channel with the
   admin origin the check names (admin_url), and no other: admin → site `draft` {story} (fills [data-story-field=
   "<uid>.<field>"] at once, rich text as elements built here, dispatches `service-admin:draft` {story, unsaved: true} on document; with
   data-live="reload" on the tag it waits for `refresh` instead, after the editor stored a draft snapshot), `refresh`,
   `saved`, `published` (reload), `focus` {uid, field} (outline), `presence` {people: [{uid, name, color}]} (other
   editors' blocks outlined in their colours), `locale` {lang}; site → admin `ready`, `select`
   {story_uuid, uid, field} (a click on a marked element), `navigated` {path}. Hovering a marked element outlines it
   with its blueprint's name, on a layer of its own (the page's layout never changes).
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
  // The visual editor: framed by the admin app, talking to its origin only.
  var framed = w.parent !== w
  var adminOrigin = ''
  var reloads = script.getAttribute('data-live') === 'reload'
  var CH = 'content-service'
  var story = null
  var hoverBox = null
  var focusBox = null
  var people = []
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
    story: null,
    onDraft: onDraft,
    richText: function (v) {
      return richNode(v, 0) || d.createDocumentFragment()
    },
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

  // ---- The visual editor's channel (framed only) ----

  /** Calls fn(story) with every unsaved Story the editor sends (client-rendered sites re-render from it). */
  function onDraft(fn) {
    d.addEventListener('service-admin:draft', function (e) {
      if (e.detail && e.detail.unsaved) fn(e.detail.story)
    })
  }

  function send(type, data) {
    if (!adminOrigin) return
    var m = { channel: CH, v: 1, type: type }
    for (var k in data) m[k] = data[k]
    w.parent.postMessage(m, adminOrigin)
  }

  /** The block with _uid `uid` anywhere in the Story's content, or null. */
  function blockOf(uid) {
    var stack = [story && story.content]
    while (stack.length) {
      var v = stack.pop()
      if (!v || typeof v !== 'object') continue
      if (v._uid === uid && typeof v.component === 'string') return v
      for (var k in v) if (v[k] && typeof v[k] === 'object') stack.push(v[k])
    }
    return null
  }

  /** `<uid>.<field>` → [uid, field], else null (a `/` path is the older form, filled from the draft read). */
  function mark(el) {
    var f = el.getAttribute('data-story-field') || ''
    var i = f.indexOf('.')
    return i > 0 && f.indexOf('/') < 0 ? [f.slice(0, i), f.slice(i + 1)] : null
  }

  /** The text of a value: strings and numbers as they are, rich text as its text (paragraphs on lines of their own). */
  function textOf(v) {
    if (typeof v === 'string' || typeof v === 'number') return String(v)
    if (!v || typeof v !== 'object') return undefined
    if (typeof v.text === 'string') return v.text
    var parts = v.content || v.blocks || v.children
    if (!Array.isArray(parts)) return undefined
    var out = []
    for (var i = 0; i < parts.length; i++) {
      var t = textOf(parts[i])
      if (t !== undefined) out.push(t)
    }
    return out.join(v.type === 'paragraph' || v.type === 'heading' ? '' : '\n')
  }

  /** A link target a page may follow: http(s), mailto, tel or relative (control characters inside a scheme removed). */
  function safeHref(h) {
    if (typeof h !== 'string') return false
    var v = h.replace(/[\u0000-\u0020\u007f-\u009f]/g, '')
    var m = /^([^/?#:]*):/.exec(v)
    return v !== '' && (!m || /^(https?|mailto|tel)$/i.test(m[1]))
  }

  var NODE_TAGS = { paragraph: 'p', bullet_list: 'ul', ordered_list: 'ol', list_item: 'li', blockquote: 'blockquote', code_block: 'pre', horizontal_rule: 'hr', hard_break: 'br' }
  var MARK_TAGS = { bold: 'strong', italic: 'em', code: 'code', link: 'a' }

  /**
   * A rich-text tree (the admin's schema: paragraph, heading, lists, blockquote, code_block, horizontal_rule,
   * hard_break, text with bold/italic/code/link) as elements, never as HTML; a link without a safe target gets no href.
   */
  function richNode(n, depth) {
    if (!n || typeof n !== 'object' || depth > 32) return null
    var out, i
    if (n.type === 'text') {
      out = d.createTextNode(typeof n.text === 'string' ? n.text : '')
      var marks = Array.isArray(n.marks) ? n.marks : []
      for (i = marks.length - 1; i >= 0; i--) {
        var tag = marks[i] && MARK_TAGS[marks[i].type]
        if (!tag) continue
        var w = d.createElement(tag)
        var href = marks[i].attrs && marks[i].attrs.href
        if (tag === 'a' && safeHref(href)) w.setAttribute('href', href)
        w.appendChild(out)
        out = w
      }
      return out
    }
    var level = n.attrs && Number(n.attrs.level)
    var name = n.type === 'heading' ? 'h' + (level >= 1 && level <= 6 ? level : 2) : NODE_TAGS[n.type]
    out = name ? d.createElement(name) : d.createDocumentFragment()
    var parts = Array.isArray(n.content) ? n.content : []
    for (i = 0; i < parts.length; i++) {
      var c = richNode(parts[i], depth + 1)
      if (c) out.appendChild(c)
    }
    return out
  }

  /** Tier 1: every marked element of the Story's blocks shows the unsaved value: text as text, rich text as elements. */
  function apply() {
    var els = d.querySelectorAll('[data-story-field]')
    for (var i = 0; i < els.length; i++) {
      var el = els[i], m = mark(el), text
      var holder = el.closest('[data-story-uuid]')
      if (holder && holder.getAttribute('data-story-uuid').toLowerCase() !== story.uuid) continue
      if (m) {
        var b = blockOf(m[0]), v = b ? b[m[1]] : undefined
        if (v && typeof v === 'object' && v.type === 'doc') {
          var sig = JSON.stringify(v)
          if (el.csRich !== sig) {
            el.csRich = sig
            el.replaceChildren(richNode(v, 0))
          }
          continue
        }
        text = textOf(v)
      } else if (holder && holder.getAttribute('data-story-path')) text = valueAt(story, el.getAttribute('data-story-field'))
      if (text !== undefined && el.textContent !== text) el.textContent = text
    }
    place()
  }

  function box(color) {
    var b = css(d.createElement('div'), {
      position: 'absolute',
      'pointer-events': 'none',
      'z-index': '2147483646',
      outline: '2px solid ' + color,
      display: 'none',
    })
    var tag = css(d.createElement('span'), {
      position: 'absolute',
      top: '-20px',
      left: '-2px',
      background: color,
      color: '#fff',
      font: '600 11px/18px system-ui, sans-serif',
      padding: '0 6px',
      'white-space': 'nowrap',
    })
    b.appendChild(tag)
    b.setAttribute('data-service-admin', '')
    d.body.appendChild(b)
    return b
  }

  function cover(b, el, label) {
    if (!el) return css(b, { display: 'none' })
    var r = el.getBoundingClientRect()
    b.firstChild.textContent = label
    css(b, { display: 'block', top: r.top + w.scrollY + 'px', left: r.left + w.scrollX + 'px', width: r.width + 'px', height: r.height + 'px' })
  }

  /** The marked element around `node` and what it is: {el, uid, field, uuid, label}, or null. */
  function target(node) {
    var el = node && node.closest ? node.closest('[data-story-field],[data-story-uuid]') : null
    if (!el) return null
    var holder = el.closest('[data-story-uuid]')
    var uuid = holder ? holder.getAttribute('data-story-uuid').toLowerCase() : story ? story.uuid : ''
    var m = el.hasAttribute('data-story-field') ? mark(el) : null
    var b = m && blockOf(m[0])
    var label = m ? (b ? b.component : 'block') + ' · ' + m[1] : el.getAttribute('data-story-block') || 'Story'
    return { el: el, uid: m ? m[0] : null, field: m ? m[1] : null, uuid: UUID.test(uuid) ? uuid : null, label: label }
  }

  function listen() {
    hoverBox = box('#4338ca')
    focusBox = box('#c026d3')
    d.addEventListener('mouseover', function (e) {
      var h = target(e.target)
      cover(hoverBox, h && h.el, h && h.label)
    })
    d.documentElement.addEventListener('mouseleave', function () {
      cover(hoverBox, null)
    })
    d.addEventListener(
      'click',
      function (e) {
        var h = target(e.target)
        if (!h || !h.uuid) return
        e.preventDefault()
        e.stopPropagation()
        send('select', { story_uuid: h.uuid, uid: h.uid, field: h.field })
      },
      true,
    )
    w.addEventListener('message', function (e) {
      var m = e.data
      // Only the admin app that framed this page, on the origin the token check named.
      if (e.source !== w.parent || e.origin !== adminOrigin || !m || m.channel !== CH || m.v !== 1) return
      if (m.type === 'draft' && m.story && typeof m.story === 'object' && typeof m.story.uuid === 'string' && UUID.test(m.story.uuid)) {
        story = api.story = m.story
        story.uuid = story.uuid.toLowerCase()
        if (!reloads) apply()
        d.dispatchEvent(new CustomEvent('service-admin:draft', { detail: { story: story, unsaved: true } }))
      } else if (m.type === 'refresh' || m.type === 'saved' || m.type === 'published') location.reload()
      else if (m.type === 'focus') {
        var el = null, els = d.querySelectorAll('[data-story-field]')
        for (var i = 0; i < els.length && !el; i++) {
          var k = mark(els[i])
          if (k && k[0] === m.uid && k[1] === m.field) el = els[i]
        }
        cover(focusBox, el, String(m.field || ''))
        if (el) {
          var r = el.getBoundingClientRect()
          if (r.bottom < 0 || r.top > w.innerHeight) el.scrollIntoView({ block: 'center' })
        }
      } else if (m.type === 'presence' && Array.isArray(m.people)) {
        // Other editors' blocks, in their colours (every marked field of the block).
        for (var j = 0; j < people.length; j++) people[j].parentNode && people[j].parentNode.removeChild(people[j])
        people = []
        var all = d.querySelectorAll('[data-story-field]')
        for (var p = 0; p < m.people.length && p < 20; p++) {
          var o = m.people[p]
          if (!o || typeof o.uid !== 'string' || typeof o.name !== 'string') continue
          var color = /^hsl\(\d+ \d+% \d+%\)$/.test(o.color) ? o.color : '#c026d3'
          for (var q = 0; q < all.length; q++) {
            var g = mark(all[q])
            if (!g || g[0] !== o.uid) continue
            var pb = box(color)
            pb.setAttribute('data-service-admin-presence', o.uid)
            cover(pb, all[q], o.name.slice(0, 60))
            people.push(pb)
          }
        }
      } else if (m.type === 'locale' && typeof m.lang === 'string') {
        api.lang = m.lang
        d.dispatchEvent(new CustomEvent('service-admin:locale', { detail: { lang: m.lang } }))
      }
    })
    send('ready', { space: session.space, path: location.pathname, reload: reloads })
    w.addEventListener('popstate', function () {
      send('navigated', { path: location.pathname })
    })
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
      if (framed) adminOrigin = new URL(adminUrl).origin
      api.active = true
      api.space = s.space
      api.expiresAt = s.expires_at
      var start = function () {
        if (adminOrigin) {
          // In the editor's frame: no Edit links or bar (the editor is beside it), drafts filled all the same.
          var els = d.querySelectorAll('[data-story-uuid][data-story-path]')
          for (var i = 0; i < els.length; i++) if (UUID.test(els[i].getAttribute('data-story-uuid'))) fill(els[i])
          listen()
        } else scan()
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
