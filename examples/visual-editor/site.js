/* The example site's whole client: read the published Story at this page's path from the CDN and render it, every
   field marked data-story-field="<block _uid>.<field>" so the visual editor updates it in place (tier 1); while in
   the editor, re-render from the unsaved Story the bridge hands over (tier 2). Text only, never HTML. */
;(function () {
  var tag = document.querySelector('script[data-space]')
  var service = new URL(tag.src).origin
  var space = tag.getAttribute('data-space')
  var main = document.getElementById('page')

  function el(name, attrs, text) {
    var e = document.createElement(name)
    for (var k in attrs) e.setAttribute(k, attrs[k])
    if (text !== undefined) e.textContent = text
    return e
  }

  function textOf(n) {
    if (n.type === 'text') return n.text || ''
    return (n.content || []).map(textOf).join(n.type === 'doc' ? '\n' : '')
  }

  function render(story) {
    var article = el('article', { 'data-story-uuid': story.uuid })
    article.appendChild(el('h1', {}, story.name))
    var blocks = (story.content && story.content.blocks) || []
    for (var i = 0; i < blocks.length; i++) {
      var b = blocks[i]
      var section = el('section', { 'data-story-block': b.component })
      for (var f in b) {
        if (f === '_uid' || f === 'component') continue
        var mark = { 'data-story-field': b._uid + '.' + f }
        // Rich text: drawn by the bridge's renderer once it has loaded (its text until then).
        if (b[f] && b[f].type === 'doc') {
          var box = el('div', mark, window.ServiceAdmin ? undefined : textOf(b[f]))
          if (window.ServiceAdmin) box.appendChild(window.ServiceAdmin.richText(b[f]))
          section.appendChild(box)
        }
        if (typeof b[f] !== 'string') continue
        var heading = f === 'headline' || f === 'title'
        section.appendChild(el(heading ? 'h2' : 'p', mark, b[f]))
      }
      article.appendChild(section)
    }
    main.replaceChildren(article)
  }

  var path = location.pathname.replace(/\/+$/, '') || '/home'
  fetch(service + '/v1/cdn/' + space + '/stories' + path)
    .then(function (r) {
      return r.ok ? r.json() : null
    })
    .then(function (b) {
      if (b) render(b.data)
      else main.replaceChildren(el('p', {}, 'Nothing published at ' + path))
    })

  // Tier 2: the unsaved Story, as the editor types (only inside the visual editor).
  document.addEventListener('service-admin:draft', function (e) {
    if (e.detail && e.detail.unsaved) render(e.detail.story)
  })
})()
